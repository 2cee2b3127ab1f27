import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { formatInstant } from '../../../domain/instant.js';
import type { MembershipsService } from '../../../domain/memberships/memberships.service.js';
import { AppError } from '../../../domain/errors.js';
import type { MembershipExportFilter } from '../../../store/exports.store.js';
import type { MembershipQueryStatus, MembershipSort } from '../../../store/membership-queries.js';
import { decodeCursor, encodeCursor } from '../../cursor.js';
import { sendSuccess } from '../../envelope.js';
import { queryInstant } from '../../schemas.js';
import { unwrap } from '../../result.js';
import {
  createMembershipSchema,
  deleteMembershipSchema,
  extendAllSchema,
  extendOneSchema,
  getMembershipSchema,
  listMembershipsSchema,
} from './memberships.schemas.js';

const END_DATES_SET = 'Membership end dates set successfully';

/** The list's filter from its query (the export's too): instants that pass the pattern but name no real one are a 422. */
export function membershipFilterOf(query: {
  user_id?: string;
  status?: MembershipQueryStatus;
  plan_id?: string;
  ends_before?: string;
  ends_after?: string;
  sort?: MembershipSort;
}): MembershipExportFilter {
  const { user_id, status, plan_id, ends_before, ends_after, sort } = query;
  const endsBefore = ends_before === undefined ? undefined : queryInstant(ends_before);
  const endsAfter = ends_after === undefined ? undefined : queryInstant(ends_after);
  if (endsBefore === null) throw new AppError('VALIDATION_ERROR', 'ends_before is not a real calendar instant');
  if (endsAfter === null) throw new AppError('VALIDATION_ERROR', 'ends_after is not a real calendar instant');
  return {
    ...(user_id === undefined ? {} : { userId: user_id }),
    ...(status === undefined ? {} : { status }),
    ...(plan_id === undefined ? {} : { planId: plan_id.toLowerCase() }),
    ...(endsBefore === undefined ? {} : { endsBefore }),
    ...(endsAfter === undefined ? {} : { endsAfter }),
    ...(sort === undefined ? {} : { sort }),
  };
}

export const membershipsRoutes: FastifyPluginAsyncTypebox<{ memberships: MembershipsService }> = async (
  app,
  { memberships },
) => {
  const base = '/v2/projects/:project_id/memberships';
  const instant = { instantFields: ['extend'] };

  app.patch(`${base}/:user_id/extend`, { schema: extendOneSchema, config: instant }, async (request, reply) => {
    const { project_id, user_id } = request.params;
    const set = unwrap(await memberships.extendOne(project_id, user_id, request.body.extend));
    return sendSuccess(reply, 200, { total: set.total, message: END_DATES_SET, data: { new_end_date: formatInstant(set.newEndDate) } });
  });

  app.patch(`${base}/extend`, { schema: extendAllSchema, config: instant }, async (request, reply) => {
    const set = unwrap(await memberships.extendAll(request.params.project_id, request.body.extend));
    return sendSuccess(reply, 200, { total: set.total, message: END_DATES_SET, data: { new_end_date: formatInstant(set.newEndDate) } });
  });

  app.post(base, { schema: createMembershipSchema, config: { instantFields: ['end_date'] } }, async (request, reply) => {
    const created = unwrap(await memberships.create(request.params.project_id, request.body));
    return sendSuccess(reply, 201, { message: 'Membership created successfully', data: created });
  });

  app.get(base, { schema: listMembershipsSchema }, async (request, reply) => {
    const { limit, offset, cursor, ...query } = request.query;
    const projectId = request.params.project_id;
    const filter = membershipFilterOf(query);
    if (cursor !== undefined) {
      // A cursor page (docs/idempotency-and-lists.md, "Cursor pages"): no total, the next cursor.
      if (offset !== 0) throw new AppError('VALIDATION_ERROR', 'offset cannot be combined with cursor: page by one or the other');
      const scope = { list: 'memberships', projectId, query };
      const page = await memberships.listAfter(projectId, { ...filter, limit }, decodeCursor(scope, cursor));
      return sendSuccess(reply, 200, { next_cursor: encodeCursor(scope, page.next), message: 'All memberships retrieved successfully', data: page.items });
    }
    const page = await memberships.list(projectId, { ...filter, limit, offset });
    return sendSuccess(reply, 200, { total: page.total, message: 'All memberships retrieved successfully', data: page.items });
  });

  app.get(`${base}/:membership_id`, { schema: getMembershipSchema }, async (request, reply) => {
    const found = unwrap(await memberships.get(request.params.project_id, request.params.membership_id));
    return sendSuccess(reply, 200, { message: 'Membership retrieved successfully', data: found });
  });

  app.delete(`${base}/:membership_id`, { schema: deleteMembershipSchema }, async (request, reply) => {
    unwrap(await memberships.delete(request.params.project_id, request.params.membership_id));
    return reply.code(204).send(null);
  });
};
