import { describe, expect, it } from 'vitest';
import { ExpirySweeper } from '../../src/domain/memberships/expiry.sweeper.js';
import { createLogger } from '../../src/logger.js';
import { ExpiryStore } from '../../src/store/expiry.store.js';
import { createMembership } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { checkoutStarted, deliver, pick } from '../support/payments.js';
import type { StripeEvent } from '../support/fake-stripe-model.js';

/**
 * Money and growth follows what the real services do (docs/analytics.md): a subscription paid,
 * a renewal failed, the first payment refunded, through Stripe's events on the webhook route, each
 * event delivered twice (the second a duplicate); a membership created through the API that
 * expires and is swept. Nothing is lost and nothing counted twice.
 */
describe('analytics after payments, refunds and expiries made through the services', () => {
  const h = useHarness();
  const DAY = 86_400_000;

  const today = async (t: Tenant) => {
    const res = await t.request({ method: 'GET', url: `${t.base}/analytics?interval=month` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.totals;
  };

  it('a subscription paid, its renewal failed, its payment refunded: each event twice, each counted once', async () => {
    const { t, stripe, session } = await checkoutStarted(h, { recurring: true });
    const twice = async (events: StripeEvent[]) => {
      for (const event of events) {
        for (let i = 0; i < 2; i++) expect((await deliver(h, stripe, event)).statusCode).toBe(200);
      }
    };
    const paid = h.stripe.world.pay(session.session_id);
    await twice(paid);
    // 10.00 every 30 days is 10.00 × 30.4375 / 30 = 10.15 a month.
    expect(await today(t)).toMatchObject({
      new_members: 1,
      active_members: 1,
      churned_members: 0,
      mrr: [{ currency: 'USD', amount: '10.15', amount_minor: 1015 }],
      revenue: [{ currency: 'USD', payments_count: 1, gross: '10.00', refunds_count: 0, net: '10.00' }],
      failed_payments: 0,
    });

    const sub = (pick(paid, 'checkout.session.completed').data.object as { subscription: string }).subscription;
    await twice(h.stripe.world.failRenewal(sub));
    expect(await today(t)).toMatchObject({ failed_payments: 1, active_members: 1, revenue: [{ payments_count: 1, gross_minor: 1000 }] });

    const pi = (pick(paid, 'charge.succeeded').data.object as { payment_intent: string }).payment_intent;
    await twice(h.stripe.world.refund(pi));
    expect(await today(t)).toMatchObject({
      new_members: 1,
      active_members: 0,
      churned_members: 1,
      mrr: [],
      revenue: [{ currency: 'USD', payments_count: 1, gross_minor: 1000, refunds_count: 1, refunds: '10.00', refunds_minor: 1000, net_minor: 0 }],
      failed_payments: 1,
      refunds_count: 1,
    });
  });

  it('a membership that expires: new, then churned on its end day, once, whether or not the sweeper has marked it', async () => {
    const t = await h.tenant();
    const end = new Date(Date.now() + 1500);
    await createMembership(t, { endDate: end.toISOString() });
    const endsToday = Math.floor(end.getTime() / DAY) === Math.floor(Date.now() / DAY);
    const expected = { new_members: 1, churned_members: endsToday ? 1 : 0, active_members: endsToday ? 0 : 1 };
    expect(await today(t)).toMatchObject(expected);
    await new Promise((resolve) => setTimeout(resolve, end.getTime() - Date.now() + 50));
    const swept = await new ExpirySweeper(new ExpiryStore(h.database.db), h.container.clock, createLogger('silent'), { intervalMs: 60_000, batchSize: 1000 }).sweepOnce();
    expect(swept).toBeGreaterThanOrEqual(1);
    expect(await today(t)).toMatchObject(expected);
  });
});
