import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PaymentsService } from '../../../domain/payments/payments.service.js';
import { AppError } from '../../../domain/errors.js';
import type { PaymentFilter } from '../../../store/payments.store.js';
import { decodeCursor, encodeCursor } from '../../cursor.js';
import { sendSuccess } from '../../envelope.js';
import { queryInstant } from '../../schemas.js';
import { listPaymentsSchema } from './payments.schemas.js';

/** The list's filter from its query (the export's too): instants that pass the pattern but name no real one are a 422. */
export function paymentFilterOf(query: { user_id?: string; status?: string; created_before?: string; created_after?: string }): PaymentFilter {
  const { user_id, status, created_before, created_after } = query;
  const createdBefore = created_before === undefined ? undefined : queryInstant(created_before);
  const createdAfter = created_after === undefined ? undefined : queryInstant(created_after);
  if (createdBefore === null) throw new AppError('VALIDATION_ERROR', 'created_before is not a real calendar instant');
  if (createdAfter === null) throw new AppError('VALIDATION_ERROR', 'created_after is not a real calendar instant');
  return {
    ...(user_id ? { userId: user_id } : {}),
    ...(status ? { status } : {}),
    ...(createdBefore === undefined ? {} : { createdBefore }),
    ...(createdAfter === undefined ? {} : { createdAfter }),
  };
}

export const paymentsRoutes: FastifyPluginAsyncTypebox<{ payments: PaymentsService }> = async (app, { payments }) => {
  app.get('/v2/projects/:project_id/payments', { schema: listPaymentsSchema }, async (request, reply) => {
    const { limit, offset, cursor, ...query } = request.query;
    const projectId = request.params.project_id;
    const filter = paymentFilterOf(query);
    if (cursor !== undefined) {
      // A cursor page (docs/idempotency-and-lists.md, "Cursor pages"): no total, the next cursor.
      if (offset !== 0) throw new AppError('VALIDATION_ERROR', 'offset cannot be combined with cursor: page by one or the other');
      const scope = { list: 'payments', projectId, query };
      const page = await payments.listAfter(projectId, { ...filter, limit }, decodeCursor(scope, cursor));
      return sendSuccess(reply, 200, { next_cursor: encodeCursor(scope, page.next), message: 'Payments retrieved successfully', data: page.items });
    }
    const page = await payments.list(projectId, { ...filter, limit, offset });
    return sendSuccess(reply, 200, { total: page.total, message: 'Payments retrieved successfully', data: page.items });
  });
};
