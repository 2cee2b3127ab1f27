import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PaymentsService } from '../../../domain/payments/payments.service.js';
import { sendSuccess } from '../../envelope.js';
import { listPaymentsSchema } from './payments.schemas.js';

export const paymentsRoutes: FastifyPluginAsyncTypebox<{ payments: PaymentsService }> = async (app, { payments }) => {
  app.get('/v2/projects/:project_id/payments', { schema: listPaymentsSchema }, async (request, reply) => {
    const page = await payments.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'Payments retrieved successfully', data: page.items });
  });
};
