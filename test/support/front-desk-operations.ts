import { createPlan } from './catalogue.js';
import { userId } from './harness.js';
import type { Operation } from './operations.js';
import { payLinksPath, portalLinksPath } from './front-desk.js';

/**
 * The front desk's API routes (docs/front-desk.md), described for the shared security and
 * transport generators (test/support/security.ts, transport.ts), the fuzz test and the OpenAPI
 * conformance test. Making a link asks Stripe nothing: no account is needed.
 */

export const payLinkCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/pay-links',
  method: 'POST',
  successStatus: 200,
  async prepare(_h, t) {
    const plan = await createPlan(t, { plan_price: '9.99' });
    return { url: payLinksPath(t), payload: { plan_id: plan.plan_id, user_id: userId() } };
  },
  invalidPayload: { plan_id: 'nope', user_id: '1' },
  allow: 'POST',
  wrongMethod: 'GET',
};

export const portalLinkCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/users/{user_id}/portal-links',
  method: 'POST',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: portalLinksPath(t, userId()) };
  },
  allow: 'POST',
  wrongMethod: 'GET',
};
