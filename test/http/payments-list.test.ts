import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { userId, useHarness } from '../support/harness.js';
import { checkout, connectStripe, deliverAll } from '../support/payments.js';

describe('GET /v2/projects/{project_id}/payments', () => {
  const h = useHarness();

  it('lists the payments newest first with amount, currency, status, user, plan and Stripe ids; filters by user and status; pages', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '12.50', plan_currency: 'EUR' });
    const yen = await createPlan(t, { plan_price: '1500', plan_currency: 'JPY' });
    const [alice, bob] = [userId(), userId()];
    const first = await checkout(t, plan.plan_id, alice);
    const paidFirst = h.stripe.world.pay(first.session_id);
    await deliverAll(h, stripe, paidFirst);
    const second = await checkout(t, yen.plan_id, bob);
    await deliverAll(h, stripe, h.stripe.world.pay(second.session_id));
    const pi = (paidFirst.at(-1)!.data.object as { payment_intent: string }).payment_intent;
    await deliverAll(h, stripe, h.stripe.world.refund(pi));

    const path = `${t.base}/payments`;
    const res = await t.request({ method: 'GET', url: path });
    const data = res.json().data;
    expectSuccess(res, {
      method: 'GET',
      path,
      message: 'Payments retrieved successfully',
      total: 2,
      data: [
        {
          payment_id: expect.any(String),
          provider: 'stripe',
          merchant_account_id: stripe.view.merchant_account_id,
          user_id: bob,
          plan_id: yen.plan_id,
          amount: '1500',
          amount_minor: 1500,
          currency: 'JPY',
          status: 'succeeded',
          checkout_session_id: second.session_id,
          payment_intent_id: expect.stringMatching(/^pi_/),
          invoice_id: null,
          subscription_id: null,
          customer_id: expect.stringMatching(/^cus_/),
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
        },
        expect.objectContaining({ user_id: alice, amount: '12.50', amount_minor: 1250, currency: 'EUR', status: 'refunded', payment_intent_id: pi }),
      ],
    });
    expect(data[0].payment_id).not.toBe(data[1].payment_id);
    const byUser = await t.request({ method: 'GET', url: `${path}?user_id=${alice}` });
    expect(byUser.json()).toMatchObject({ total: 1, data: [{ user_id: alice }] });
    const refunded = await t.request({ method: 'GET', url: `${path}?status=refunded` });
    expect(refunded.json()).toMatchObject({ total: 1, data: [{ status: 'refunded' }] });
    // created_before / created_after: strict bounds on created_at, in either instant form.
    const between = new Date((Date.parse(data[0].created_at) + Date.parse(data[1].created_at)) / 2);
    await h.database.db.execute(sql`UPDATE payments SET created_at = created_at - interval '1 hour' WHERE project_id = ${t.projectId} AND user_id = ${alice}`);
    const cut = new Date(Date.parse(data[1].created_at) - 30 * 60_000).toISOString();
    const before = await t.request({ method: 'GET', url: `${path}?created_before=${cut}` });
    expect(before.json()).toMatchObject({ total: 1, data: [{ user_id: alice }] });
    const after = await t.request({ method: 'GET', url: `${path}?created_after=${Date.parse(cut)}&status=succeeded` });
    expect(after.json()).toMatchObject({ total: 1, data: [{ user_id: bob }] });
    expect((await t.request({ method: 'GET', url: `${path}?created_after=${between.toISOString()}&created_before=${cut}` })).json()).toMatchObject({ total: 0, data: [] });
    const page = await t.request({ method: 'GET', url: `${path}?limit=1&offset=1` });
    expect(page.json()).toMatchObject({ total: 2, data: [{ user_id: alice }] });
    // Another project sees none of them.
    const other = await h.tenant();
    expect((await other.request({ method: 'GET', url: `${other.base}/payments` })).json()).toMatchObject({ total: 0, data: [] });
  });

  it('refuses a status, user_id or limit it does not know with 422', async () => {
    const t = await h.tenant();
    for (const query of ['status=paid', 'user_id=bob', 'limit=0', 'limit=101', 'offset=-1', 'created_before=yesterday', 'created_after=2026-02-30T00:00:00.000Z', 'sort=amount']) {
      const res = await t.request({ method: 'GET', url: `${t.base}/payments?${query}` });
      expect(res.statusCode, `${query}: ${res.body}`).toBe(422);
    }
  });
});
