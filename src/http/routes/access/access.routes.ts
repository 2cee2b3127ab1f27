import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AccessService } from '../../../domain/access/access.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { listAccessSchema, listInvitesSchema, resyncAccessSchema } from './access.schemas.js';

/** docs/access.md, "The access rows and the API". */
export const accessRoutes: FastifyPluginAsyncTypebox<{ access: AccessService }> = async (app, { access }) => {
  const base = '/v2/projects/:project_id/access';

  app.get(base, { schema: listAccessSchema }, async (request, reply) => {
    const { user_id, target_id, state, limit, offset } = request.query;
    const page = await access.list(request.params.project_id, { userId: user_id, targetId: target_id, state, limit, offset });
    return sendSuccess(reply, 200, { total: page.total, message: 'Access retrieved successfully', data: page.items });
  });

  app.post(
    `${base}/resync`,
    {
      schema: resyncAccessSchema,
      // The body is optional ({user_id?}): a bodiless POST is validated as an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const done = await access.resync(request.params.project_id, request.body.user_id ?? null);
      return sendSuccess(reply, 200, { message: 'Access resynced successfully', data: done });
    },
  );

  // docs/access-telegram.md: a member's invite links, under their membership.
  app.get('/v2/projects/:project_id/memberships/:membership_id/invites', { schema: listInvitesSchema }, async (request, reply) => {
    const invites = unwrap(await access.invites(request.params.project_id, request.params.membership_id));
    return sendSuccess(reply, 200, { total: invites.length, message: 'Invites retrieved successfully', data: invites });
  });
};
