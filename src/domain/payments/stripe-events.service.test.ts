import { describe, expect, it } from 'vitest';
import { transactorOver } from '../transactions.js';
import type { ReversalStatus } from './payment-rules.js';
import type { Grant, StripeEventStores } from './payment-statements.js';
import type { StripeEventLike } from './stripe-api.js';
import { StripeEventsService } from './stripe-events.service.js';

/**
 * The use case of one Stripe event on twins of its statements: which statements run, in which
 * order, and what the rules make of their answers. The SQL, the locks and the races are the
 * storage and HTTP tiers' (test/storage/stripe-events.test.ts, test/http/stripe-*.test.ts).
 */

const NOW = new Date('2030-01-01T00:00:00.000Z');
const DAY = 86_400_000;
const ACCOUNT = { id: 'ma1', projectId: 'p1', environment: 'sandbox' };
const META = { project_id: 'p1', plan_id: 'q1', user_id: '42' };

/** Answers each statement as the test sets it and logs the writes, in order. */
class Twin {
  readonly writes: string[] = [];
  fresh = true;
  held: ReversalStatus | null = null;
  failedRow = false;
  inserted = true;
  /** The user of the succeeded payment a reversal marks; null: none is succeeded. */
  reversedUser: string | null = '42';
  recorded = false;
  planExists = true;
  endedAfter = false;
  member = false;
  statusIds: string[] = ['m1'];
  trialFree = true;

  readonly stores: StripeEventStores = {
    // The confirmation a grant queues is not one of the writes these tests follow.
    notifications: { queueConfirmation: () => Promise.resolve(true) },
    guildJoins: { queueAfterPayment: () => Promise.resolve(false) },
    stripeEvents: {
      recordOnce: () => Promise.resolve(this.fresh),
      setOutcome: (_meta, outcome) => this.write(`outcome ${outcome}`),
    },
    payments: {
      succeedFailed: () => Promise.resolve(this.failedRow),
      recordSucceeded: (_of, p) => this.answer(`payment ${p.key}`, this.inserted),
      recordFailed: (_of, f) => this.answer(`failed ${f.key}`, true),
      startTrial: (t) => this.answer(`trial ${t.userId} ${t.trialDays}d`, this.trialFree),
      releaseSessionTrial: () => Promise.resolve(false),
      rememberEmail: (_p, userId, email) => this.write(`email ${userId} ${email}`),
    },
    paymentReversals: {
      lockPaymentIntent: (_p, pi) => this.write(`lock ${pi}`),
      markReversed: (_p, pi, status) => this.answer(`mark ${pi} ${status}`, this.reversedUser),
      isRecorded: () => Promise.resolve(this.recorded),
      hold: (h) => this.answer(`hold ${h.paymentIntentId} ${h.status}`, true),
      heldFor: () => Promise.resolve(this.held),
      releaseHeld: (_p, pi) => this.write(`release ${pi}`),
    },
    paidMemberships: {
      holderOf: () => Promise.resolve(null),
      planExists: () => Promise.resolve(this.planExists),
      statusSetAfter: () => Promise.resolve(this.endedAfter),
      extendByPlan: (g: Grant) => this.answer(`extend ${g.userId}`, this.member),
      createForPlan: (g: Grant) => this.answer(`create ${g.userId}`, { created: true, banned: false }),
      grantTrial: (g: Grant, end: Date) => this.answer(`trial access ${g.userId} until ${end.toISOString()}`, 'created' as const),
      setSubscriptionStatus: (s) => this.answer(`status ${s.subscriptionId} ${s.status}`, this.statusIds),
      endNow: (ids) => this.answer(`end ${ids.join(',')}`, true),
      endMemberNow: (_p, userId) => this.answer(`end member ${userId}`, true),
      keepUntil: (ids, until) => this.answer(`keep ${ids.join(',')} until ${until.toISOString()}`, true),
    },
    coupons: {
      redeemSessionUse: (_p, sessionId) => this.answer(`redeem ${sessionId}`, []),
      releaseSessionUse: (_p, sessionId) => this.answer(`release coupon of ${sessionId}`, ['SPRING']),
    },
  };

  private write(what: string): Promise<void> {
    this.writes.push(what);
    return Promise.resolve();
  }

  private answer<T>(what: string, value: T): Promise<T> {
    this.writes.push(what);
    return Promise.resolve(value);
  }
}

function service(twin: Twin, graceMs = 3 * DAY) {
  return new StripeEventsService({ secretsOf: () => Promise.resolve(null) }, transactorOver(twin.stores), null, { verifyEvent: async () => null }, { now: () => NOW }, { graceMs });
}

const event = (type: string, object: Record<string, unknown>, livemode = false): StripeEventLike => ({ id: 'evt_1', type, created: NOW.getTime() / 1000 - 60, livemode, data: { object } });
const paidSession = event('checkout.session.completed', { id: 'cs_1', mode: 'payment', payment_status: 'paid', payment_intent: 'pi_1', metadata: META, amount_total: 999, currency: 'usd' });

describe('applying a Stripe event', () => {
  it('an event id recorded already is a duplicate: nothing else runs', async () => {
    const twin = new Twin();
    twin.fresh = false;
    expect(await service(twin).apply(ACCOUNT, paidSession, 'webhook')).toStrictEqual({ event_id: 'evt_1', type: 'checkout.session.completed', result: 'duplicate', outcome: null });
    expect(twin.writes).toStrictEqual([]);
  });

  it('a live-mode event for a sandbox account is recorded as ignored and changes nothing', async () => {
    const twin = new Twin();
    const receipt = await service(twin).apply(ACCOUNT, event('checkout.session.completed', {}, true), 'reconcile');
    expect(receipt.outcome).toBe('ignored: a live-mode event for a sandbox account');
    expect(twin.writes).toStrictEqual(['outcome ignored: a live-mode event for a sandbox account']);
  });

  it('a first payment locks its payment intent, is recorded, redeems the session’s coupon use and creates the membership', async () => {
    const twin = new Twin();
    const receipt = await service(twin).apply(ACCOUNT, paidSession, 'webhook');
    expect(receipt).toMatchObject({ result: 'applied', outcome: 'applied: membership created' });
    // No membership to extend (the twin's extendByPlan finds none): it is created.
    expect(twin.writes).toStrictEqual(['lock pi_1', 'payment pi_1', 'redeem cs_1', 'extend 42', 'create 42', 'outcome applied: membership created']);
  });

  it('a payment whose refund came first is recorded, then reversed at once: the hold is released and nothing is granted', async () => {
    const twin = new Twin();
    twin.held = 'refunded';
    const receipt = await service(twin).apply(ACCOUNT, paidSession, 'webhook');
    expect(receipt.outcome).toBe('applied: payment recorded refunded (its refund came first), no membership granted, membership ended');
    expect(twin.writes).toStrictEqual(['lock pi_1', 'payment pi_1', 'redeem cs_1', 'mark pi_1 refunded', 'end member 42', 'release pi_1', `outcome ${receipt.outcome}`]);
  });

  it('a subscription that ended after the payment was made is not revived by it; a plan gone grants nothing either', async () => {
    const invoice = event('invoice.paid', { id: 'in_1', amount_paid: 500, currency: 'eur', subscription: 'sub_1', subscription_details: { metadata: META } });
    const ended = new Twin();
    ended.endedAfter = true;
    expect((await service(ended).apply(ACCOUNT, invoice, 'webhook')).outcome).toBe('recorded; no membership change: the subscription ended after this payment');
    expect(ended.writes.filter((w) => /^(extend|create)/.test(w))).toStrictEqual([]);
    const gone = new Twin();
    gone.planExists = false;
    expect((await service(gone).apply(ACCOUNT, invoice, 'webhook')).outcome).toBe('recorded; no membership change: the plan no longer exists');
  });

  it('past_due keeps access until now plus the grace period, or is only recorded without one; canceled ends it', async () => {
    const pastDue = event('customer.subscription.updated', { id: 'sub_1', status: 'past_due' });
    const kept = new Twin();
    expect((await service(kept).apply(ACCOUNT, pastDue, 'webhook')).outcome).toBe('applied: subscription past_due, access kept for the grace period');
    expect(kept.writes).toContain(`keep m1 until ${new Date(NOW.getTime() + 3 * DAY).toISOString()}`);
    const noGrace = new Twin();
    expect((await service(noGrace, 0).apply(ACCOUNT, pastDue, 'webhook')).outcome).toBe('applied: subscription past_due');
    expect(noGrace.writes).toStrictEqual(['status sub_1 past_due', 'outcome applied: subscription past_due']);
    const canceled = new Twin();
    await service(canceled).apply(ACCOUNT, event('customer.subscription.deleted', { id: 'sub_1', status: 'active' }), 'webhook');
    expect(canceled.writes.slice(0, 2)).toStrictEqual(['status sub_1 canceled', 'end m1']);
  });

  it('a refund of a payment not recorded yet is held for it; of one reversed already, ignored', async () => {
    const refund = event('charge.refunded', { payment_intent: 'pi_1', refunded: true });
    const early = new Twin();
    early.reversedUser = null;
    expect((await service(early).apply(ACCOUNT, refund, 'webhook')).outcome).toBe('recorded; no payment of pi_1 yet: it will be recorded refunded when it arrives, and grant nothing');
    expect(early.writes.slice(0, 3)).toStrictEqual(['lock pi_1', 'mark pi_1 refunded', 'hold pi_1 refunded']);
    const twice = new Twin();
    twice.reversedUser = null;
    twice.recorded = true;
    expect((await service(twice).apply(ACCOUNT, refund, 'webhook')).outcome).toBe('ignored: the payment of pi_1 is reversed already');
    expect(twice.writes.some((w) => w.startsWith('hold'))).toBe(false);
  });
});
