import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { UsersService } from '../../../domain/users/users.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { banUserSchema, getUserSchema, listUsersSchema, searchUsersSchema, unbanUserSchema } from './users.schemas.js';

const USERS_RETRIEVED = 'Users retrieved successfully';

export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  const base = '/v2/projects/:project_id';

  app.get(`${base}/users`, { schema: listUsersSchema }, async (request, reply) => {
    const { limit, offset } = request.query;
    const page = await users.list(request.params.project_id, { limit, offset });
    return sendSuccess(reply, 200, { total: page.total, page: { limit, offset }, message: USERS_RETRIEVED, data: page.items });
  });

  app.get(`${base}/users/search`, { schema: searchUsersSchema }, async (request, reply) => {
    const { search, limit, offset } = request.query;
    const page = unwrap(await users.search(request.params.project_id, search, { limit, offset }));
    return sendSuccess(reply, 200, { total: page.total, page: { limit, offset }, message: USERS_RETRIEVED, data: page.items });
  });

  app.get(`${base}/users/:user_id`, { schema: getUserSchema }, async (request, reply) => {
    const user = unwrap(await users.get(request.params.project_id, request.params.user_id));
    return sendSuccess(reply, 200, { message: 'User retrieved successfully', data: user });
  });

  app.put(
    `${base}/ban/:user_id`,
    {
      schema: banUserSchema,
      // The body is optional ({reason?}): a bodiless PUT is validated as an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { project_id, user_id } = request.params;
      const banned = unwrap(await users.ban(project_id, user_id, request.principal.keyId, request.body.reason ?? null));
      return sendSuccess(reply, 200, { message: 'User banned successfully', data: banned });
    },
  );

  app.delete(`${base}/ban/:user_id`, { schema: unbanUserSchema }, async (request, reply) => {
    unwrap(await users.unban(request.params.project_id, request.params.user_id));
    return reply.code(204).send(null);
  });
};
