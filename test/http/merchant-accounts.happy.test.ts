import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { connectStripe, merchantAccountRows, merchantAccountsPath, newWebhookSecret } from '../support/payments.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(chunk.toString());
    done();
  },
});

describe('POST/GET/DELETE /v2/projects/{project_id}/merchant-accounts: happy', () => {
  const h = useHarness({ logger: createLogger('trace', sink) });

  it('checks the key with Stripe, stores the account sealed, and answers it with its webhook path and no secret', async () => {
    const t = await h.tenant();
    const { account, secretKey } = h.stripe.world.addAccount({ name: 'Acme Memberships' });
    const webhookSecret = newWebhookSecret();
    const before = Date.now();
    const res = await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: secretKey, webhook_secret: webhookSecret } });
    const data = res.json().data;
    expectSuccess(res, {
      status: 201,
      method: 'POST',
      path: merchantAccountsPath(t),
      message: 'Merchant account created successfully',
      data: {
        merchant_account_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        provider: 'stripe',
        environment: 'sandbox',
        provider_account_id: account.id,
        provider_account_name: 'Acme Memberships',
        webhook_path: `/v2/stripe/events/${data.merchant_account_id}`,
        webhook_secret_set: true,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: data.created_at,
      },
    });
    expect(Date.parse(data.created_at)).toBeGreaterThanOrEqual(before - 1);
    // One check, GET /v1/account with the key itself.
    expect(h.stripe.calls.filter((c) => c.key === secretKey).map((c) => [c.method, c.path, c.status])).toStrictEqual([['GET', '/v1/account', 200]]);
    const [row] = await merchantAccountRows(h, t.projectId);
    expect(row!.secret_key_sealed).toMatch(/^v1\./);
    expect(row!.secret_key_sealed).not.toContain(secretKey.slice(8));
    expect(h.container.secretBox!.open(row!.secret_key_sealed)).toBe(secretKey);
    expect(h.container.secretBox!.open(row!.webhook_secret_sealed!)).toBe(webhookSecret);
    expect(res.body).not.toContain(secretKey);
    expect(res.body).not.toContain(webhookSecret);
  });

  it('GET lists and reads the accounts, never a secret; DELETE removes the account and its secrets', async () => {
    const t = await h.tenant();
    const sandbox = await connectStripe(h, t);
    const production = await connectStripe(h, t, { environment: 'production' });
    expect(production.secretKey).toMatch(/^sk_live_/);
    const list = await t.request({ method: 'GET', url: merchantAccountsPath(t) });
    expectSuccess(list, { method: 'GET', path: merchantAccountsPath(t), message: 'Merchant accounts retrieved successfully', total: 2, data: [production.view, sandbox.view] });
    const one = await t.request({ method: 'GET', url: `${merchantAccountsPath(t)}/${production.view.merchant_account_id}` });
    expectSuccess(one, { method: 'GET', path: `${merchantAccountsPath(t)}/${production.view.merchant_account_id}`, message: 'Merchant account retrieved successfully', data: production.view });
    for (const body of [list.body, one.body]) for (const secret of [sandbox.secretKey, sandbox.webhookSecret, production.secretKey, production.webhookSecret]) expect(body).not.toContain(secret);
    const path = `${merchantAccountsPath(t)}/${sandbox.view.merchant_account_id}`;
    const del = await t.request({ method: 'DELETE', url: path });
    expectSuccess(del, { method: 'DELETE', path, message: 'Merchant account deleted successfully', data: null });
    expect((await merchantAccountRows(h, t.projectId)).map((r) => r.id)).toStrictEqual([production.view.merchant_account_id]);
    expect((await t.request({ method: 'GET', url: path })).statusCode).toBe(404);
  });

  it('a second POST for the same provider and environment replaces the key and keeps the id, webhook path and (unless given) webhook secret', async () => {
    const t = await h.tenant();
    const first = await connectStripe(h, t);
    const rolled = h.stripe.world.addKey(first.account);
    const res = await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: rolled } });
    expectSuccess(res, {
      method: 'POST',
      path: merchantAccountsPath(t),
      message: 'Merchant account updated successfully',
      data: { ...first.view, updated_at: expect.stringMatching(ISO_MS) },
    });
    const [row] = await merchantAccountRows(h, t.projectId);
    expect(h.container.secretBox!.open(row!.secret_key_sealed)).toBe(rolled);
    expect(h.container.secretBox!.open(row!.webhook_secret_sealed!)).toBe(first.webhookSecret);
    // A key of another Stripe account: that account's endpoint signs with another secret, so the old one goes.
    const other = h.stripe.world.addAccount();
    const moved = await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: other.secretKey } });
    expect(moved.json().data).toMatchObject({ merchant_account_id: first.view.merchant_account_id, provider_account_id: other.account.id, webhook_secret_set: false });
  });

  it('takes the key with surrounding whitespace and ignores unknown fields', async () => {
    const t = await h.tenant();
    const { secretKey } = h.stripe.world.addAccount();
    const res = await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: ` ${secretKey}\n`, merchant_account_id: 'x', webhook_secret_set: true } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.webhook_secret_set).toBe(false);
    expect(h.container.secretBox!.open((await merchantAccountRows(h, t.projectId))[0]!.secret_key_sealed)).toBe(secretKey);
  });

  it('never logs a secret key or webhook secret, even at trace', async () => {
    const t = await h.tenant();
    const connected = await connectStripe(h, t);
    await t.request({ method: 'POST', url: merchantAccountsPath(t), payload: { provider: 'stripe', environment: 'sandbox', secret_key: 'sk_test_refusedrefused99' } });
    const log = lines.join('');
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [connected.secretKey, connected.webhookSecret, 'sk_test_refusedrefused99']) expect(log).not.toContain(secret);
  });
});
