import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CheckoutService } from '../../../domain/payments/checkout.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { createCheckoutSchema } from './checkout.schemas.js';

export const checkoutRoutes: FastifyPluginAsyncTypebox<{ checkout: CheckoutService }> = async (app, { checkout }) => {
  app.post('/v2/projects/:project_id/checkout', { schema: createCheckoutSchema }, async (request, reply) => {
    const session = unwrap(await checkout.create(request.params.project_id, request.body));
    return sendSuccess(reply, 200, { message: 'Checkout session created successfully', data: session });
  });
};
