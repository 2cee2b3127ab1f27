import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CouponsService } from '../../../domain/payments/coupons.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { COUPON_INSTANT_FIELDS, createCouponSchema, deleteCouponSchema, getCouponSchema, listCouponsSchema, updateCouponSchema } from './coupons.schemas.js';

export const couponsRoutes: FastifyPluginAsyncTypebox<{ coupons: CouponsService }> = async (app, { coupons }) => {
  const base = '/v2/projects/:project_id/coupons';
  const config = { instantFields: COUPON_INSTANT_FIELDS };

  app.post(base, { schema: createCouponSchema, config }, async (request, reply) => {
    const coupon = unwrap(await coupons.create(request.params.project_id, request.body));
    return sendSuccess(reply, 201, { message: 'Coupon created successfully', data: coupon });
  });

  app.get(base, { schema: listCouponsSchema }, async (request, reply) => {
    const page = await coupons.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'Coupons retrieved successfully', data: page.items });
  });

  app.get(`${base}/:coupon_id`, { schema: getCouponSchema }, async (request, reply) => {
    const coupon = unwrap(await coupons.get(request.params.project_id, request.params.coupon_id));
    return sendSuccess(reply, 200, { message: 'Coupon retrieved successfully', data: coupon });
  });

  app.patch(`${base}/:coupon_id`, { schema: updateCouponSchema, config }, async (request, reply) => {
    const coupon = unwrap(await coupons.update(request.params.project_id, request.params.coupon_id, request.body));
    return sendSuccess(reply, 200, { message: 'Coupon updated successfully', data: coupon });
  });

  app.delete(`${base}/:coupon_id`, { schema: deleteCouponSchema }, async (request, reply) => {
    unwrap(await coupons.delete(request.params.project_id, request.params.coupon_id));
    return reply.code(204).send(null);
  });
};
