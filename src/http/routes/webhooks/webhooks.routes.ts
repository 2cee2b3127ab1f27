import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhooksService } from '../../../domain/webhooks/webhooks.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { createWebhookSchema, deleteWebhookSchema } from './webhooks.schemas.js';

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  const base = '/v2/projects/:project_id/integrations/webhooks';

  app.post(base, { schema: createWebhookSchema }, async (request, reply) => {
    const created = unwrap(await webhooks.create(request.params.project_id, request.body.url));
    return sendSuccess(reply, 200, { message: 'Webhook created successfully', data: created });
  });

  app.delete(`${base}/:webhook_id`, { schema: deleteWebhookSchema }, async (request, reply) => {
    unwrap(await webhooks.delete(request.params.project_id, request.params.webhook_id));
    return sendSuccess(reply, 200, { message: 'Webhook deleted successfully', data: null });
  });
};
