import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PayLinksService } from '../../../domain/front-desk/pay-links.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { createPayLinkSchema } from './pay-links.schemas.js';

export const payLinksRoutes: FastifyPluginAsyncTypebox<{ payLinks: Pick<PayLinksService, 'create'> }> = async (app, { payLinks }) => {
  app.post('/v2/projects/:project_id/pay-links', { schema: createPayLinkSchema }, async (request, reply) => {
    const { plan_id, user_id, coupon } = request.body;
    const link = unwrap(await payLinks.create(request.params.project_id, { planId: plan_id, userId: user_id, ...(coupon ? { coupon } : {}) }));
    return sendSuccess(reply, 200, { message: 'Pay link created successfully', data: link });
  });
};
