import { createPlan } from './catalogue.js';
import { userId } from './harness.js';
import type { Operation } from './operations.js';
import { CHECKOUT_URLS, checkout, checkoutPath, connectStripe, deliverAll, merchantAccountsPath, newWebhookSecret } from './payments.js';

/**
 * The payments routes, described for the shared security and transport generators
 * (test/support/security.ts, transport.ts), the fuzz test and the OpenAPI conformance test. Each
 * request uses a new account of the harness's fake Stripe.
 */

export const merchantAccountCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/merchant-accounts',
  method: 'POST',
  successStatus: 201,
  async prepare(h, t) {
    // A create (201), not a replacement (200): the tenant's sandbox account from an earlier request goes first.
    const listed = await t.request({ method: 'GET', url: merchantAccountsPath(t) });
    for (const a of listed.json().data as { merchant_account_id: string }[]) {
      await t.request({ method: 'DELETE', url: `${merchantAccountsPath(t)}/${a.merchant_account_id}` });
    }
    const { secretKey } = h.stripe.world.addAccount();
    return { url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: secretKey, webhook_secret: newWebhookSecret() } };
  },
  invalidPayload: { provider: 'square', environment: 'sandbox', secret_key: 'sk_test_x' },
  allow: 'GET, POST',
  wrongMethod: 'PATCH',
};

export const merchantAccountList: Operation = {
  name: 'GET /v2/projects/{project_id}/merchant-accounts',
  method: 'GET',
  successStatus: 200,
  async prepare(h, t) {
    await connectStripe(h, t);
    return { url: merchantAccountsPath(t) };
  },
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const merchantAccountGet: Operation = {
  name: 'GET /v2/projects/{project_id}/merchant-accounts/{merchant_account_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(h, t) {
    const { view } = await connectStripe(h, t);
    return { url: `${merchantAccountsPath(t)}/${view.merchant_account_id}` };
  },
  allow: 'GET, DELETE',
  wrongMethod: 'PATCH',
};

export const merchantAccountDelete: Operation = {
  name: 'DELETE /v2/projects/{project_id}/merchant-accounts/{merchant_account_id}',
  method: 'DELETE',
  successStatus: 200,
  async prepare(h, t) {
    const { view } = await connectStripe(h, t);
    return { url: `${merchantAccountsPath(t)}/${view.merchant_account_id}` };
  },
  allow: 'GET, DELETE',
  wrongMethod: 'POST',
};

export const checkoutCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/checkout',
  method: 'POST',
  successStatus: 200,
  async prepare(h, t) {
    const listed = await t.request({ method: 'GET', url: merchantAccountsPath(t) });
    if (listed.json().total === 0) await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '9.99' });
    return { url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: userId(), ...CHECKOUT_URLS } };
  },
  invalidPayload: { plan_id: 'nope', user_id: '1', ...CHECKOUT_URLS },
  allow: 'POST',
  wrongMethod: 'GET',
};

export const paymentList: Operation = {
  name: 'GET /v2/projects/{project_id}/payments',
  method: 'GET',
  successStatus: 200,
  async prepare(h, t) {
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '9.99' });
    const session = await checkout(t, plan.plan_id, userId());
    await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
    return { url: `${t.base}/payments?limit=10&status=succeeded` };
  },
  allow: 'GET',
  wrongMethod: 'POST',
};
