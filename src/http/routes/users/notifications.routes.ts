import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { MemberNotificationsService } from '../../../domain/users/member-notifications.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { listMemberNotificationsSchema } from './notifications.schemas.js';

export const memberNotificationsRoutes: FastifyPluginAsyncTypebox<{ notifications: MemberNotificationsService }> = async (app, { notifications }) => {
  app.get('/v2/projects/:project_id/users/:user_id/notifications', { schema: listMemberNotificationsSchema }, async (request, reply) => {
    const { limit, offset } = request.query;
    const page = unwrap(await notifications.list(request.params.project_id, request.params.user_id, { limit, offset }));
    return sendSuccess(reply, 200, { total: page.total, page: { limit, offset }, message: 'Notifications retrieved successfully', data: page.items });
  });
};
