import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { IntegrationsService } from '../../../domain/integrations/integrations.service.js';
import type { Platform } from '../../../domain/targets/target.view.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { integrationSchemas } from './integrations.schemas.js';

/** The platforms whose connection routes are served, and their names in messages. */
const PLATFORMS: readonly { platform: Platform; label: string; clientSecret?: boolean }[] = [
  { platform: 'discord', label: 'Discord', clientSecret: true },
  { platform: 'telegram', label: 'Telegram' },
];

export const integrationsRoutes: FastifyPluginAsyncTypebox<{ integrations: IntegrationsService }> = async (app, { integrations }) => {
  for (const { platform, label, clientSecret } of PLATFORMS) {
    const path = `/v2/projects/:project_id/integrations/${platform}`;
    const schemas = integrationSchemas(label, { clientSecret });

    app.put(path, { schema: schemas.connect }, async (request, reply) => {
      const body = request.body as { bot_token: string; client_secret?: string };
      const connected = unwrap(await integrations.connect(request.params.project_id, platform, body.bot_token, body.client_secret));
      return sendSuccess(reply, 200, { message: `${label} bot connected successfully`, data: connected });
    });

    app.get(path, { schema: schemas.get }, async (request, reply) => {
      const status = unwrap(await integrations.status(request.params.project_id, platform));
      return sendSuccess(reply, 200, { message: `${label} integration retrieved successfully`, data: status });
    });

    app.delete(path, { schema: schemas.disconnect }, async (request, reply) => {
      unwrap(await integrations.disconnect(request.params.project_id, platform));
      return sendSuccess(reply, 200, { message: `${label} bot disconnected successfully`, data: null });
    });
  }
};
