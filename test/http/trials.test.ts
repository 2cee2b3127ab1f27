import { describe, expect, it } from 'vitest';
import { eventRows, expectRefusal, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { headingOf, openPage, pathOf, payLinksPath } from '../support/front-desk.js';
import { userId, useHarness, type Harness, type Tenant } from '../support/harness.js';
import { CHECKOUT_URLS, checkoutPath, connectStripe, deliver, deliverAll, pick, type ConnectedStripe } from '../support/payments.js';

/**
 * Trials (docs/payments.md, "Trials"): a recurring plan's `trial_days`, checkout opening a Stripe
 * subscription with `subscription_data.trial_period_days` (stripe-node against the fake Stripe),
 * access during the trial marked on the membership, conversion by the first paid invoice, a
 * cancelled or failing trial ending as any subscription, and one trial per user per project,
 * decided when the session is made.
 */

const DAY = 86_400_000;
const GRACE_DAYS = 3;
const endIn = (m: { membership_end_date: string }) => (Date.parse(m.membership_end_date) - Date.now()) / DAY;

interface TrialMembership {
  membership_end_date: string;
  subscription_id: string | null;
  subscription_status: string | null;
  status: string;
  trial_ends_at?: string;
  in_trial?: boolean;
}

async function membership(t: Tenant, user: string): Promise<TrialMembership> {
  const res = await t.request({ method: 'GET', url: `${t.base}/memberships?user_id=${user}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data[0] as TrialMembership;
}

async function trialCheckout(t: Tenant, planId: string, user: string, urls = CHECKOUT_URLS) {
  const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: planId, user_id: user, ...urls } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { session_id: string; mode: string; trial_days?: number | null };
}

async function trialPlan(t: Tenant, days = 7) {
  return createPlan(t, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false }, trial_days: days });
}

/** A member's trial, started: the session paid (nothing to pay) and its events delivered. */
async function trialStarted(h: Harness, o: { days?: number } = {}) {
  const t = await h.tenant();
  const stripe = await connectStripe(h, t);
  const plan = await trialPlan(t, o.days);
  const user = userId();
  const session = await trialCheckout(t, plan.plan_id, user);
  const events = h.stripe.world.pay(session.session_id);
  const receipts = await deliverAll(h, stripe, events);
  const sub = (pick(events, 'checkout.session.completed').data.object as { subscription: string }).subscription;
  return { t, stripe, plan, user, session, events, receipts, sub };
}

const sessionParams = (h: Harness, id: string) => h.stripe.world.session(id).params as { subscription_data?: { trial_period_days?: string; metadata?: Record<string, string> }; metadata: Record<string, string> };

describe('plans: trial_days', () => {
  const h = useHarness();

  it('a recurring plan takes trial_days; the plan shows it only when set, and null clears it', async () => {
    const t = await h.tenant();
    const plan = await trialPlan(t, 14);
    expect(plan).toMatchObject({ trial_days: 14 });
    const got = await t.request({ method: 'GET', url: `${t.base}/plans/${plan.plan_id}` });
    expect(got.json().data.trial_days).toBe(14);
    const cleared = await t.request({ method: 'PATCH', url: `${t.base}/plans/${plan.plan_id}`, payload: { trial_days: null } });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect('trial_days' in cleared.json().data).toBe(false);
    const plain = await createPlan(t);
    expect('trial_days' in plain).toBe(false);
  });

  it('a trial on a one-time plan, or out of 1..730, is a 422 naming trial_days, and nothing changes', async () => {
    const t = await h.tenant();
    const recurring = await trialPlan(t, 7);
    const before = await projectState(h, t.projectId);
    const bodies = [
      { plan_name: 'A', plan_price: '5', plan_currency: 'USD', plan_duration: '1 month', trial_days: 7 },
      { plan_name: 'A', plan_price: '5', plan_currency: 'USD', plan_duration: '1 month', plan_data: { plan_recurring: true }, trial_days: 0 },
      { plan_name: 'A', plan_price: '5', plan_currency: 'USD', plan_duration: '1 month', plan_data: { plan_recurring: true }, trial_days: 731 },
      { plan_name: 'A', plan_price: '5', plan_currency: 'USD', plan_duration: '1 month', plan_data: { plan_recurring: true }, trial_days: '7' },
      { plan_name: 'A', plan_price: '5', plan_currency: 'USD', plan_duration: '1 month', plan_data: { plan_recurring: true }, trial_days: 1.5 },
    ];
    for (const payload of bodies) {
      const res = await t.request({ method: 'POST', url: `${t.base}/plans`, payload });
      expectRefusal(res, /trial_days/);
    }
    // Making the trial's plan one-time would leave a trial on a one-time plan.
    const patch = await t.request({ method: 'PATCH', url: `${t.base}/plans/${recurring.plan_id}`, payload: { plan_data: { plan_recurring: false } } });
    expectRefusal(patch, /trial_days needs a recurring plan/);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });
});

describe('checkout and Stripe events: trials', () => {
  const h = useHarness({ env: { TENURE_PAYMENTS_GRACE_PERIOD: `${GRACE_DAYS}d` } });

  it('checkout opens a subscription with trial_period_days; the trial gives access until its end, marked in trial, with no payment', async () => {
    const { t, user, session, events, receipts, sub } = await trialStarted(h, { days: 7 });
    expect(session).toMatchObject({ mode: 'subscription', trial_days: 7 });
    const params = sessionParams(h, session.session_id);
    expect(params.subscription_data).toMatchObject({ trial_period_days: '7', metadata: { trial_days: '7', user_id: user } });
    // What Stripe sends: the trialing subscription, its $0 first invoice, the session completed with no payment required.
    expect(events.map((e) => e.type)).toStrictEqual(['customer.subscription.created', 'invoice.paid', 'checkout.session.completed']);
    expect(pick(events, 'customer.subscription.created').data.object).toMatchObject({ status: 'trialing', trial_end: expect.any(Number) });
    expect(pick(events, 'invoice.paid').data.object).toMatchObject({ amount_paid: 0, billing_reason: 'subscription_create' });
    expect(pick(events, 'checkout.session.completed').data.object).toMatchObject({ payment_status: 'no_payment_required', amount_total: 0 });
    expect(receipts.map((r) => r.outcome)).toStrictEqual([
      'ignored: tenure does not act on customer.subscription.created',
      expect.stringMatching(/^applied: trial started, membership created until /),
      'recorded already: the trial was started by another event (or the member had one before)',
    ]);
    const m = await membership(t, user);
    expect(m).toMatchObject({ status: 'active', subscription_id: sub, subscription_status: 'trialing', in_trial: true, trial_ends_at: m.membership_end_date });
    expect(endIn(m)).toBeGreaterThan(6.99);
    expect(endIn(m)).toBeLessThan(7.01);
    const types = (await eventRows(h, t.projectId)).map((e) => e.type);
    // Access is a membership like any other; no money moved, so no payment.
    expect(types.filter((x) => x.startsWith('payment.') || x.startsWith('membership.'))).toStrictEqual(['membership.created']);
    const created = (await eventRows(h, t.projectId)).find((e) => e.type === 'membership.created')!.data as { membership: TrialMembership };
    expect(created.membership).toMatchObject({ in_trial: true, trial_ends_at: m.trial_ends_at });
  });

  it('the first paid invoice at the trial end converts it: extended by the plan duration from the trial end, no longer in trial', async () => {
    const { t, stripe, user, sub } = await trialStarted(h, { days: 7 });
    const willEnd = await deliverAll(h, stripe, h.stripe.world.trialWillEnd(sub));
    expect(willEnd[0]!.outcome).toBe('ignored: tenure does not act on customer.subscription.trial_will_end');
    const conversion = h.stripe.world.endTrial(sub);
    expect(conversion.map((e) => e.type)).toStrictEqual(['customer.subscription.updated', 'charge.succeeded', 'invoice.paid']);
    const receipts = await deliverAll(h, stripe, conversion);
    expect(receipts.at(-1)!.outcome).toBe('applied: membership extended by the plan duration');
    const m = await membership(t, user);
    expect(m).toMatchObject({ status: 'active', subscription_status: 'active', in_trial: false });
    expect(endIn(m)).toBeGreaterThan(36.99);
    expect(endIn(m)).toBeLessThan(37.01);
    const payments = await t.request({ method: 'GET', url: `${t.base}/payments?user_id=${user}` });
    expect(payments.json().data.map((p: { amount: string; status: string }) => [p.amount, p.status])).toStrictEqual([['10.00', 'succeeded']]);
  });

  it('a trial cancelled ends the membership now; a trial whose first payment fails keeps access for the grace period, as any subscription', async () => {
    const a = await trialStarted(h);
    await deliverAll(h, a.stripe, h.stripe.world.cancel(a.sub));
    expect(await membership(a.t, a.user)).toMatchObject({ status: 'expired', subscription_status: 'canceled', in_trial: false });

    const b = await trialStarted(h, { days: 1 });
    const failed = await deliverAll(h, b.stripe, h.stripe.world.endTrial(b.sub, { failed: true }));
    expect(failed.map((r) => r.type)).toStrictEqual(['invoice.payment_failed', 'customer.subscription.updated']);
    const m = await membership(b.t, b.user);
    expect(m).toMatchObject({ status: 'active', subscription_status: 'past_due', in_trial: false });
    expect(endIn(m)).toBeGreaterThan(GRACE_DAYS - 0.01);
  });

  it('one trial per user per project: the second checkout pays at once, whatever the plan; another user, or the same user in another project, gets one', async () => {
    const { t, plan, user } = await trialStarted(h, { days: 7 });
    const other = await trialPlan(t, 30);
    const again = await trialCheckout(t, other.plan_id, user);
    expect(again.trial_days).toBeNull();
    const params = sessionParams(h, again.session_id);
    expect(params.subscription_data?.trial_period_days).toBeUndefined();
    expect(params.metadata.trial_days).toBeUndefined();
    // Paid at once: the session is paid, the membership extended by the plan duration, no trial.
    const sameAgain = await trialCheckout(t, plan.plan_id, user, { ...CHECKOUT_URLS, success_url: 'https://shop.example.com/again' });
    expect(sameAgain.trial_days).toBeNull();
    expect((await trialCheckout(t, plan.plan_id, userId())).trial_days).toBe(7);
    const t2 = await h.tenant();
    await connectStripe(h, t2);
    const plan2 = await trialPlan(t2, 3);
    expect((await trialCheckout(t2, plan2.plan_id, user)).trial_days).toBe(3);
  });

  it('a trial is held by its open session: a retry gets the same session, another checkout meanwhile pays at once; an expired session gives the trial back', async () => {
    const t = await h.tenant();
    const stripe: ConnectedStripe = await connectStripe(h, t);
    const plan = await trialPlan(t, 5);
    const user = userId();
    const first = await trialCheckout(t, plan.plan_id, user);
    expect(first.trial_days).toBe(5);
    expect(await trialCheckout(t, plan.plan_id, user)).toMatchObject({ session_id: first.session_id, trial_days: 5 });
    const elsewhere = await trialCheckout(t, plan.plan_id, user, { ...CHECKOUT_URLS, cancel_url: 'https://shop.example.com/elsewhere' });
    expect(elsewhere.trial_days).toBeNull();
    const [expired] = await deliverAll(h, stripe, h.stripe.world.expire(first.session_id));
    expect(expired!.outcome).toBe('applied: the trial it reserved is given back');
    const later = await trialCheckout(t, plan.plan_id, user, { ...CHECKOUT_URLS, success_url: 'https://shop.example.com/later' });
    expect(later.trial_days).toBe(5);
    // The paid session made meanwhile (no trial) still pays as any subscription.
    const paid = await deliverAll(h, stripe, h.stripe.world.pay(elsewhere.session_id));
    expect(paid.at(-1)!.outcome).toBe('recorded already: the payment was applied by another event');
    expect(await membership(t, user)).toMatchObject({ status: 'active', subscription_status: 'active' });
    expect('in_trial' in (await membership(t, user))).toBe(false);
  });

  it('a trial started by the $0 invoice alone (the session event lost) grants once; the session event after it, and redeliveries, change nothing', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await trialPlan(t, 7);
    const user = userId();
    const session = await trialCheckout(t, plan.plan_id, user);
    const events = h.stripe.world.pay(session.session_id);
    const [first] = await deliverAll(h, stripe, [pick(events, 'invoice.paid')]);
    expect(first!.outcome).toMatch(/^applied: trial started/);
    const before = await projectState(h, t.projectId);
    const dup = await deliver(h, stripe, pick(events, 'invoice.paid'));
    expect(dup.json().data.result).toBe('duplicate');
    const [late] = await deliverAll(h, stripe, [pick(events, 'checkout.session.completed')]);
    expect(late!.outcome).toBe('recorded already: the trial was started by another event (or the member had one before)');
    const after = await projectState(h, t.projectId);
    expect(after.memberships ?? null).toStrictEqual(before.memberships ?? null);
    expect(await membership(t, user)).toMatchObject({ in_trial: true });
  });
});

describe('pay links: trials', () => {
  const h = useHarness();

  it("a member's pay link opens the trial, and the done page applies the session itself when Stripe's event is lost: in trial, once", async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_name: 'Gold', plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false }, trial_days: 7 });
    const user = userId();
    const res = await t.request({ method: 'POST', url: payLinksPath(t), payload: { plan_id: plan.plan_id, user_id: user } });
    expect(res.statusCode, res.body).toBe(200);
    const link = res.json().data as { url: string };
    const opened = await openPage(h, pathOf(link.url));
    expect(opened.statusCode, opened.body).toBe(303);
    const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(opened.headers.location as string)![1]!;
    expect(sessionParams(h, sessionId).subscription_data?.trial_period_days).toBe('7');
    const events = h.stripe.world.pay(sessionId);
    const done = await openPage(h, `${pathOf(link.url)}/done`);
    expect(done.statusCode, done.body).toBe(200);
    expect(headingOf(done.body)).toBe('You are in!');
    expect(done.body).toContain('Your free trial of Gold is active until');
    expect(done.body).not.toContain('Thank you for your payment');
    expect(await membership(t, user)).toMatchObject({ status: 'active', in_trial: true, subscription_status: 'trialing' });
    const before = await projectState(h, t.projectId);
    const late = await deliverAll(h, stripe, events);
    expect(late.map((r) => r.outcome)).toContain('recorded already: the trial was started by another event (or the member had one before)');
    const after = await projectState(h, t.projectId);
    expect(after.memberships).toStrictEqual(before.memberships);
  });
});
