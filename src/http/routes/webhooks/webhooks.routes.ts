import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhooksService } from '../../../domain/webhooks/webhooks.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import {
  createWebhookSchema,
  deleteWebhookSchema,
  getDeliverySchema,
  getWebhookSchema,
  listDeliveriesSchema,
  listWebhooksSchema,
  replayDeliverySchema,
  replayRangeSchema,
  rotateSecretSchema,
  testWebhookSchema,
  updateWebhookSchema,
} from './webhooks.schemas.js';

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  const base = '/v2/projects/:project_id/integrations/webhooks';
  const one = `${base}/:webhook_id`;

  app.post(base, { schema: createWebhookSchema, config: { idempotency: { withhold: ['secret'] } } }, async (request, reply) => {
    const created = unwrap(await webhooks.create(request.params.project_id, request.body.url));
    return sendSuccess(reply, 200, { message: 'Webhook created successfully', data: created });
  });

  app.get(base, { schema: listWebhooksSchema }, async (request, reply) => {
    const page = await webhooks.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'Webhooks retrieved successfully', data: page.items });
  });

  app.get(one, { schema: getWebhookSchema }, async (request, reply) => {
    const hook = unwrap(await webhooks.get(request.params.project_id, request.params.webhook_id));
    return sendSuccess(reply, 200, { message: 'Webhook retrieved successfully', data: hook });
  });

  app.patch(one, { schema: updateWebhookSchema }, async (request, reply) => {
    const { project_id, webhook_id } = request.params;
    const hook = unwrap(await webhooks.setEnabled(project_id, webhook_id, request.body.enabled));
    return sendSuccess(reply, 200, { message: 'Webhook updated successfully', data: hook });
  });

  app.delete(one, { schema: deleteWebhookSchema }, async (request, reply) => {
    unwrap(await webhooks.delete(request.params.project_id, request.params.webhook_id));
    return sendSuccess(reply, 200, { message: 'Webhook deleted successfully', data: null });
  });

  app.post(`${one}/rotate-secret`, { schema: rotateSecretSchema, config: { idempotency: { withhold: ['secret'] } } }, async (request, reply) => {
    const rotated = unwrap(await webhooks.rotateSecret(request.params.project_id, request.params.webhook_id));
    return sendSuccess(reply, 200, { message: 'Webhook secret rotated successfully', data: rotated });
  });

  app.post(`${one}/test`, { schema: testWebhookSchema }, async (request, reply) => {
    const sent = unwrap(await webhooks.sendTest(request.params.project_id, request.params.webhook_id));
    return sendSuccess(reply, 202, { message: 'Test event queued for delivery', data: sent });
  });

  app.get(`${one}/deliveries`, { schema: listDeliveriesSchema }, async (request, reply) => {
    const { project_id, webhook_id } = request.params;
    const page = unwrap(await webhooks.listDeliveries(project_id, webhook_id, request.query));
    return sendSuccess(reply, 200, { total: page.total, message: 'Webhook deliveries retrieved successfully', data: page.items });
  });

  app.get(`${one}/deliveries/:delivery_id`, { schema: getDeliverySchema }, async (request, reply) => {
    const { project_id, webhook_id, delivery_id } = request.params;
    const delivery = unwrap(await webhooks.getDelivery(project_id, webhook_id, delivery_id));
    return sendSuccess(reply, 200, { message: 'Webhook delivery retrieved successfully', data: delivery });
  });

  app.post(`${one}/deliveries/:delivery_id/replay`, { schema: replayDeliverySchema }, async (request, reply) => {
    const { project_id, webhook_id, delivery_id } = request.params;
    const delivery = unwrap(await webhooks.replayDelivery(project_id, webhook_id, delivery_id));
    return sendSuccess(reply, 202, { message: 'Delivery queued again', data: delivery });
  });

  app.post(`${one}/replay`, { schema: replayRangeSchema }, async (request, reply) => {
    const { project_id, webhook_id } = request.params;
    const replay = unwrap(await webhooks.replayRange(project_id, webhook_id, request.query));
    return sendSuccess(reply, 202, { message: 'Events queued again for delivery', data: replay });
  });
};
