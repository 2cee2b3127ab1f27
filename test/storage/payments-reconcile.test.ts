import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { StripeReconciler } from '../../src/domain/payments/stripe.reconciler.js';
import { createLogger } from '../../src/logger.js';
import { rowsOf } from '../../src/database/db.js';
import { eventRows } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { checkoutWith, createCoupon, getCoupon, redemptionRows } from '../support/coupons.js';
import { userId, useHarness, type Harness } from '../support/harness.js';
import { checkout, connectStripe, deliver } from '../support/payments.js';

/**
 * Reconciliation (docs/payments.md), on both storages (its claim is FOR UPDATE SKIP LOCKED):
 * events Stripe never delivered are listed from the fake Stripe's `GET /v1/events` and applied as
 * the webhook would have, once; a late delivery of one of them afterwards is a duplicate.
 */

const reconcilerOf = (h: Harness, intervalMs = 600_000) =>
  new StripeReconciler(h.container.stores.merchantAccounts, h.services.stripeEvents, h.container.stripe, h.container.secretBox, h.container.clock, createLogger('silent'), { intervalMs });

describe('Stripe reconciliation', () => {
  const h = useHarness();

  it('applies the events the webhook missed, oldest first; a later pass and a late delivery change nothing', async () => {
    await h.reset();
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false } });
    const user = userId();
    const session = await checkout(t, plan.plan_id, user);
    // Paid, renewed, then cancelled: none of it delivered.
    const paid = h.stripe.world.pay(session.session_id);
    const sub = (paid.at(-1)!.data.object as { subscription: string }).subscription;
    const renewed = h.stripe.world.renew(sub);
    const reconciler = reconcilerOf(h);
    const outcome = await reconciler.reconcileOnce();
    // Listed: the kinds tenure acts on only (not customer.subscription.created, not charge.succeeded).
    expect(outcome).toStrictEqual({ accounts: 1, listed: 3, applied: 3 });
    const calls = h.stripe.calls.filter((c) => c.key === stripe.secretKey && c.path === '/v1/events');
    expect(calls.at(-1)!.params).toMatchObject({ types: expect.arrayContaining(['invoice.paid', 'charge.refunded']) });
    const types = (await eventRows(h, t.projectId)).map((e) => e.type).filter((x) => /^(membership|payment)\./.test(x));
    expect(types).toStrictEqual(['payment.succeeded', 'membership.created', 'payment.succeeded', 'membership.extended']);
    const ledger = rowsOf<{ source: string }>(await h.database.db.execute(sql`SELECT source FROM payment_events WHERE merchant_account_id = ${stripe.view.merchant_account_id}`));
    expect(ledger.map((r) => r.source)).toStrictEqual(['reconcile', 'reconcile', 'reconcile']);
    // Not due again within the interval; due again, nothing new is applied.
    expect(await reconciler.reconcileOnce()).toStrictEqual({ accounts: 0, listed: 0, applied: 0 });
    await h.database.db.execute(sql`UPDATE merchant_accounts SET reconciled_at = reconciled_at - interval '1 hour'`);
    expect(await reconciler.reconcileOnce()).toMatchObject({ accounts: 1, applied: 0 });
    // Stripe's late delivery of one of them is a duplicate.
    const late = await deliver(h, stripe, renewed.at(-1)!);
    expect(late.json().data, late.body).toMatchObject({ result: 'duplicate' });
    // A cancellation the webhook missed ends the membership at the next pass.
    h.stripe.world.cancel(sub);
    await h.database.db.execute(sql`UPDATE merchant_accounts SET reconciled_at = reconciled_at - interval '1 hour'`);
    expect(await reconciler.reconcileOnce()).toMatchObject({ accounts: 1, applied: 1 });
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships?user_id=${user}` });
    expect(res.json().data[0]).toMatchObject({ status: 'expired', subscription_status: 'canceled' });
  });

  it('a refund the webhook delivered before its payment holds; the payment the webhook missed, applied by reconciliation, is recorded refunded and grants nothing', async () => {
    await h.reset();
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t);
    const user = userId();
    const session = await checkout(t, plan.plan_id, user);
    const paid = h.stripe.world.pay(session.session_id);
    const pi = (paid.at(-1)!.data.object as { payment_intent: string }).payment_intent;
    const [refund] = h.stripe.world.refund(pi);
    const early = await deliver(h, stripe, refund!);
    expect(early.json().data, early.body).toMatchObject({ result: 'applied', outcome: expect.stringMatching(/^recorded; no payment of pi_/) });
    // Listed oldest first: the session's completion (applied now), the refund (a duplicate).
    expect(await reconcilerOf(h).reconcileOnce()).toStrictEqual({ accounts: 1, listed: 2, applied: 1 });
    const ledger = rowsOf<{ type: string; source: string; outcome: string }>(
      await h.database.db.execute(sql`SELECT type, source, outcome FROM payment_events WHERE merchant_account_id = ${stripe.view.merchant_account_id} ORDER BY created_at, type`),
    );
    expect(ledger.find((r) => r.type === 'checkout.session.completed')).toStrictEqual({
      type: 'checkout.session.completed',
      source: 'reconcile',
      outcome: 'applied: payment recorded refunded (its refund came first), no membership granted',
    });
    const types = (await eventRows(h, t.projectId)).map((e) => e.type).filter((x) => /^(membership|payment)\./.test(x));
    expect(types).toStrictEqual(['payment.succeeded', 'payment.refunded']);
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships?user_id=${user}` });
    expect(res.json().data, res.body).toStrictEqual([]);
  });

  it('leaves an account whose key Stripe refuses for the next pass, and goes on with the others', async () => {
    await h.reset();
    const t1 = await h.tenant();
    const broken = await connectStripe(h, t1);
    broken.account.secretKeys.delete(broken.secretKey);
    const t2 = await h.tenant();
    const ok = await connectStripe(h, t2);
    const plan = await createPlan(t2);
    const session = await checkout(t2, plan.plan_id, userId());
    h.stripe.world.pay(session.session_id);
    const outcome = await reconcilerOf(h).reconcileOnce();
    expect(outcome).toStrictEqual({ accounts: 2, listed: 1, applied: 1 });
    const marks = rowsOf<{ id: string; through: boolean }>(await h.database.db.execute(sql`SELECT id, reconciled_through IS NOT NULL AS through FROM merchant_accounts ORDER BY id`));
    expect(Object.fromEntries(marks.map((m) => [m.id, m.through]))).toStrictEqual({ [broken.view.merchant_account_id]: false, [ok.view.merchant_account_id]: true });
  });
  it('gives back the coupon use of a session that expired unpaid when its checkout.session.expired was never delivered', async () => {
    await h.reset();
    const t = await h.tenant();
    await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '15' });
    const coupon = await createCoupon(t, { max_uses: 1 });
    const res = await checkoutWith(t, plan.plan_id, userId(), coupon.code);
    expect(res.statusCode, res.body).toBe(200);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(1);
    h.stripe.world.expire(res.json().data.session_id);
    expect(await reconcilerOf(h).reconcileOnce()).toStrictEqual({ accounts: 1, listed: 1, applied: 1 });
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(0);
    expect((await redemptionRows(h, coupon.coupon_id)).map((r) => r.status)).toStrictEqual(['released']);
  });
});
