import { createCoupon, couponBody, couponsPath } from './coupons.js';
import type { Operation } from './operations.js';

/**
 * The coupon routes, described for the shared security and transport generators, the fuzz test
 * and the OpenAPI conformance test (test/support/operations.all.ts finds them by file name).
 */

export const couponCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/coupons',
  method: 'POST',
  successStatus: 201,
  async prepare(_h, t) {
    return { url: couponsPath(t), payload: couponBody() };
  },
  invalidPayload: { code: 'SPRING', coupon_type: 'half', amount: 20 },
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const couponList: Operation = {
  name: 'GET /v2/projects/{project_id}/coupons',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await createCoupon(t);
    return { url: `${couponsPath(t)}?limit=10` };
  },
  allow: 'GET, POST',
  wrongMethod: 'DELETE',
};

export const couponGet: Operation = {
  name: 'GET /v2/projects/{project_id}/coupons/{coupon_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const coupon = await createCoupon(t);
    return { url: `${couponsPath(t)}/${coupon.coupon_id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};

export const couponUpdate: Operation = {
  name: 'PATCH /v2/projects/{project_id}/coupons/{coupon_id}',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    const coupon = await createCoupon(t);
    return { url: `${couponsPath(t)}/${coupon.coupon_id}`, payload: { max_uses: 10 } };
  },
  invalidPayload: { max_uses: 0 },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'PUT',
};

export const couponDelete: Operation = {
  name: 'DELETE /v2/projects/{project_id}/coupons/{coupon_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const coupon = await createCoupon(t);
    return { url: `${couponsPath(t)}/${coupon.coupon_id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};
