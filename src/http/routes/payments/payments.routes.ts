import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PaymentsService } from '../../../domain/payments/payments.service.js';
import { AppError } from '../../../domain/errors.js';
import { sendSuccess } from '../../envelope.js';
import { queryInstant } from '../../schemas.js';
import { listPaymentsSchema } from './payments.schemas.js';

export const paymentsRoutes: FastifyPluginAsyncTypebox<{ payments: PaymentsService }> = async (app, { payments }) => {
  app.get('/v2/projects/:project_id/payments', { schema: listPaymentsSchema }, async (request, reply) => {
    const { created_before, created_after, ...rest } = request.query;
    const createdBefore = created_before === undefined ? undefined : queryInstant(created_before);
    const createdAfter = created_after === undefined ? undefined : queryInstant(created_after);
    if (createdBefore === null) throw new AppError('VALIDATION_ERROR', 'created_before is not a real calendar instant');
    if (createdAfter === null) throw new AppError('VALIDATION_ERROR', 'created_after is not a real calendar instant');
    const page = await payments.list(request.params.project_id, {
      ...rest,
      ...(createdBefore === undefined ? {} : { createdBefore }),
      ...(createdAfter === undefined ? {} : { createdAfter }),
    });
    return sendSuccess(reply, 200, { total: page.total, message: 'Payments retrieved successfully', data: page.items });
  });
};
