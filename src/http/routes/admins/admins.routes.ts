import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AdminsService } from '../../../domain/admins/admins.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { addAdminSchema, listAdminsSchema, listPermissionsSchema, removeAdminSchema, updateAdminSchema } from './admins.schemas.js';

export const adminsRoutes: FastifyPluginAsyncTypebox<{ admins: AdminsService }> = async (app, { admins }) => {
  const base = '/v2/projects/:project_id/admins';

  app.get(base, { schema: listAdminsSchema }, async (request, reply) => {
    const page = await admins.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'Admins fetched successfully', data: page.items });
  });

  app.post(base, { schema: addAdminSchema }, async (request, reply) => {
    const admin = unwrap(await admins.add(request.params.project_id, request.body.user_id, request.body.permissions));
    return sendSuccess(reply, 201, { message: 'Admin added successfully', data: admin });
  });

  app.get(`${base}/permissions`, { schema: listPermissionsSchema }, async (_request, reply) => {
    const permissions = admins.permissions();
    return sendSuccess(reply, 200, { total: permissions.length, message: 'Permissions fetched successfully', data: [...permissions] });
  });

  app.put(`${base}/:user_id`, { schema: updateAdminSchema }, async (request, reply) => {
    const admin = unwrap(await admins.update(request.params.project_id, request.params.user_id, request.body.permissions));
    return sendSuccess(reply, 200, { message: 'Admin updated successfully', data: admin });
  });

  app.delete(`${base}/:user_id`, { schema: removeAdminSchema }, async (request, reply) => {
    unwrap(await admins.remove(request.params.project_id, request.params.user_id));
    return reply.code(204).send(null);
  });
};
