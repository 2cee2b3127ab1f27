import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TargetsService } from '../../../domain/targets/targets.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import {
  createTargetSchema,
  deleteTargetSchema,
  getTargetSchema,
  listTargetsSchema,
  updateTargetSchema,
  updateTargetsSchema,
} from './targets.schemas.js';

/** The original product's wording for both the single and the batch update. */
const updatedMessage = (n: number) => `Successfully updated ${n} target(s)`;

export const targetsRoutes: FastifyPluginAsyncTypebox<{ targets: TargetsService }> = async (app, { targets }) => {
  const base = '/v2/projects/:project_id/targets';

  app.post(base, { schema: createTargetSchema }, async (request, reply) => {
    const created = unwrap(await targets.create(request.params.project_id, request.body));
    return sendSuccess(reply, 201, { message: 'Target created successfully', data: created });
  });

  app.get(base, { schema: listTargetsSchema }, async (request, reply) => {
    const page = await targets.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'Targets retrieved successfully', data: page.items });
  });

  app.patch(base, { schema: updateTargetsSchema }, async (request, reply) => {
    const updated = unwrap(await targets.update(request.params.project_id, request.body));
    return sendSuccess(reply, 200, { total: updated.length, message: updatedMessage(updated.length), data: updated });
  });

  app.get(`${base}/:target_id`, { schema: getTargetSchema }, async (request, reply) => {
    const target = unwrap(await targets.get(request.params.project_id, request.params.target_id));
    // The original answers an array of one here.
    return sendSuccess(reply, 200, { total: 1, message: 'Target retrieved successfully', data: [target] });
  });

  app.patch(`${base}/:target_id`, { schema: updateTargetSchema }, async (request, reply) => {
    const target = unwrap(await targets.updateOne(request.params.project_id, request.params.target_id, request.body));
    return sendSuccess(reply, 200, { total: 1, message: updatedMessage(1), data: target });
  });

  app.delete(`${base}/:target_id`, { schema: deleteTargetSchema }, async (request, reply) => {
    unwrap(await targets.delete(request.params.project_id, request.params.target_id));
    return reply.code(204).send(null);
  });
};
