import { describe, expect, it } from 'vitest';
import { expectError, expectRefusal, forEachCase, projectState } from '../support/api.js';
import { createHarness, useHarness } from '../support/harness.js';
import { connectStripe, merchantAccountsPath } from '../support/payments.js';

describe('POST/GET/DELETE /v2/projects/{project_id}/merchant-accounts: errors', () => {
  const h = useHarness();

  it('refuses PayPal and NOWPayments with a 422 that says only Stripe is built, before anything is asked or stored', async () => {
    const t = await h.tenant();
    const before = await projectState(h, t.projectId);
    const calls = h.stripe.calls.length;
    for (const provider of ['paypal', 'nowpayments']) {
      const res = await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider, environment: 'sandbox', secret_key: 'sk_test_abc' } });
      expectError(res, {
        status: 422,
        code: 'VALIDATION_ERROR',
        method: 'POST',
        path: merchantAccountsPath(t),
        message: `provider ${provider} is not supported yet: tenure takes payments with Stripe only (provider "stripe")`,
      });
    }
    expect(h.stripe.calls.length).toBe(calls);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('refuses a key Stripe does not know with 422, after asking Stripe once, and stores nothing', async () => {
    const t = await h.tenant();
    const before = await projectState(h, t.projectId);
    const key = 'sk_test_notaknownkeynotaknownkey42';
    const res = await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: key } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path: merchantAccountsPath(t), message: expect.stringMatching(/^Stripe refused the secret key \(401\)/) });
    expect(res.body).not.toContain(key);
    expect(h.stripe.calls.filter((c) => c.key === key).map((c) => c.status)).toStrictEqual([401]);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('refuses malformed input with 422 naming the field, without asking Stripe', async () => {
    const t = await h.tenant();
    const { secretKey } = h.stripe.world.addAccount();
    const before = await projectState(h, t.projectId);
    const calls = h.stripe.calls.length;
    const valid = { provider: 'stripe', environment: 'sandbox', secret_key: secretKey };
    await forEachCase(
      [
        ['unknown provider', [{ ...valid, provider: 'square' }, 'provider must be one of: stripe, paypal, nowpayments']],
        ['unknown environment', [{ ...valid, environment: 'test' }, 'environment must be one of: sandbox, production']],
        ['missing key', [{ provider: 'stripe', environment: 'sandbox' }, /secret_key/]],
        ['key not a string', [{ ...valid, secret_key: 42 }, /secret_key must be a string/]],
        ['publishable key', [{ ...valid, secret_key: 'pk_test_abc' }, /publishable key/]],
        ['live key for the sandbox', [{ ...valid, secret_key: secretKey.replace('sk_test_', 'sk_live_') }, /live-mode key but environment is sandbox/]],
        ['test key for production', [{ ...valid, environment: 'production' }, /test-mode key but environment is production/]],
        ['webhook secret of another shape', [{ ...valid, webhook_secret: 'abc' }, /whsec_/]],
      ] as const,
      async ([payload, message]) => expectRefusal(await t.request({ method: 'POST', url: merchantAccountsPath(t), payload }), message),
    );
    expect(h.stripe.calls.length).toBe(calls);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 503 and stores nothing when Stripe cannot be reached', async () => {
    const app = await createHarness({ env: { TENURE_STRIPE_API_URL: 'http://127.0.0.1:1' } });
    try {
      const t2 = await app.tenant();
      const res = await t2.request({ method: 'POST', url: merchantAccountsPath(t2), payload: { provider: 'stripe', environment: 'sandbox', secret_key: 'sk_test_abc' } });
      expectError(res, { status: 503, code: 'SERVICE_UNAVAILABLE', method: 'POST', path: merchantAccountsPath(t2), message: 'Stripe could not be reached; try again in a moment' });
      expect(await projectState(app, t2.projectId)).toMatchObject({ payments: { merchant_accounts: [] } });
    } finally {
      await app.close();
    }
  });

  it('404 for an unknown or another project\'s account, 422 for an id that is not a UUID', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const theirs = await connectStripe(h, other);
    for (const id of [theirs.view.merchant_account_id, '00000000-0000-4000-8000-000000000000']) {
      for (const method of ['GET', 'DELETE'] as const) {
        const path = `${merchantAccountsPath(t)}/${id}`;
        expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: 'Merchant account not found' });
      }
    }
    const res = await t.request({ method: 'GET', url: `${merchantAccountsPath(t)}/nope` });
    expect(res.statusCode, res.body).toBe(422);
    expect((await other.request({ method: 'GET', url: `${merchantAccountsPath(other)}/${theirs.view.merchant_account_id}` })).statusCode).toBe(200);
  });
});
