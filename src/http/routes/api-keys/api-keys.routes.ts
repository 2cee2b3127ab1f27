import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiKeysService } from '../../../domain/projects/api-keys.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { createKeySchema, listKeysSchema, revokeKeySchema } from './api-keys.schemas.js';

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeysService }> = async (app, { apiKeys }) => {
  const base = '/v2/projects/:project_id/integrations/api-keys';

  // Not idempotent-replayable: a stored response would keep the secret in the database, where
  // keys otherwise exist only as hashes (docs/idempotency-and-lists.md). A retry issues another key.
  app.post(base, { schema: createKeySchema, config: { idempotency: false } }, async (request, reply) => {
    const created = unwrap(await apiKeys.create(request.params.project_id, request.body, request.principal.keyId));
    return sendSuccess(reply, 200, { message: 'API key created successfully', data: created });
  });

  app.get(base, { schema: listKeysSchema }, async (request, reply) => {
    const page = await apiKeys.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'API keys retrieved successfully', data: { keys: page.items } });
  });

  app.delete(`${base}/:key_id`, { schema: revokeKeySchema }, async (request, reply) => {
    const { project_id, key_id } = request.params;
    const revoked = unwrap(await apiKeys.revoke(project_id, key_id, request.principal.keyId));
    return sendSuccess(reply, 200, { message: 'API key revoked successfully', data: revoked });
  });
};
