import { describe, expect, it } from 'vitest';
import type { StripeEvent } from '../support/fake-stripe-model.js';
import { useHarness } from '../support/harness.js';
import { checkout, connectStripe, deliver, deliverAll, membershipOf, pick } from '../support/payments.js';
import { createPlan } from '../support/catalogue.js';
import { userId } from '../support/harness.js';

/**
 * Platform callbacks are bounded per endpoint, not per client IP (docs/rate-limits.md, "Platform
 * callbacks"): Stripe sends every merchant's events from a small pool of addresses, in bursts (a
 * renewal run, a catch-up after an outage). Here with the production limit per client IP (300 a
 * minute, which API calls count against too), every event comes from one address at once. The
 * key's own limits are raised: the set-up and read-backs go through the API with one key.
 */

const DAY = 86_400_000;
const CALLBACKS_PER_MINUTE = 1_200;

describe('Stripe events in a burst from one address', () => {
  const h = useHarness({
    env: {
      TENURE_RATE_LIMIT_IP: '300',
      TENURE_RATE_LIMIT_CALLBACKS: String(CALLBACKS_PER_MINUTE),
    },
  });

  // A thousand transactions on one machine's database: seconds on a quiet machine, much more on a
  // loaded one, so the bound is wide; what is checked is that none is refused or lost.
  it('1,000 signed events at once are all applied, and the address keeps its API budget', { timeout: 180_000 }, async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false } });
    // A renewal run: ten subscriptions, each renewed until a thousand events are waiting.
    const members = Array.from({ length: 10 }, () => userId());
    const subscriptions: string[] = [];
    for (const user of members) {
      const session = await checkout(t, plan.plan_id, user);
      const paid = h.stripe.world.pay(session.session_id);
      await deliverAll(h, stripe, paid);
      subscriptions.push((pick(paid, 'checkout.session.completed').data.object as { subscription: string }).subscription);
    }
    const ends = new Map<string, number>();
    for (const user of members) ends.set(user, Date.parse((await membershipOf(t, user))!.membership_end_date));
    const renewals = new Map<string, number>();
    const burst: StripeEvent[] = [];
    for (let i = 0; burst.length < 1_000; i++) {
      const user = members[i % members.length]!;
      burst.push(...h.stripe.world.renew(subscriptions[i % members.length]!));
      renewals.set(user, (renewals.get(user) ?? 0) + 1);
    }

    const answers = await Promise.all(burst.map((event) => deliver(h, stripe, event)));
    const refused = answers.filter((res) => res.statusCode !== 200);
    expect(refused.length, refused[0]?.body).toBe(0);
    expect(answers.every((res) => res.json().data.result === 'applied')).toBe(true);
    // Nothing lost, nothing doubled: each member is extended by one plan duration per renewal.
    for (const user of members) {
      const end = Date.parse((await membershipOf(t, user))!.membership_end_date);
      expect((end - ends.get(user)!) / DAY, user).toBeCloseTo(30 * renewals.get(user)!, 3);
    }
    // The address that sent them is an API client like any other, with its whole budget.
    const api = await t.request({ method: 'GET', url: `${t.base}/memberships?limit=1` });
    expect(api.statusCode, api.body).toBe(200);
  });

  it('past its bound an endpoint gets 429 with Retry-After, never a suspension: other endpoints and the API carry on', async () => {
    const t = await h.tenant();
    const busy = await connectStripe(h, t);
    const other = await connectStripe(h, await h.tenant());
    const unknown = { id: 'evt_nothing_to_apply', object: 'event', type: 'customer.created', livemode: false, created: Math.floor(Date.now() / 1000), data: { object: {} } } as unknown as StripeEvent;
    // Fill the busy endpoint's window, then go on well past the suspension threshold (10 refusals).
    const answers = await Promise.all(Array.from({ length: CALLBACKS_PER_MINUTE + 30 }, () => deliver(h, busy, unknown)));
    const refusals = answers.filter((res) => res.statusCode === 429);
    expect(refusals.length).toBe(30);
    expect(refusals[0]!.json()).toMatchObject({ code: 429, error: { code: 'RATE_LIMIT_EXCEEDED', retry_after: expect.any(Number) } });
    expect(Number(refusals[0]!.headers['retry-after'])).toBeGreaterThan(0);
    // Another merchant account's events from the same address are still received.
    const elsewhere = await deliver(h, other, unknown);
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    // And the address is not suspended for the API.
    const api = await t.request({ method: 'GET', url: `${t.base}/memberships?limit=1` });
    expect(api.statusCode, api.body).toBe(200);
  });
});
