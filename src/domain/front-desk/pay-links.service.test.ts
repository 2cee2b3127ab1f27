import { describe, expect, it } from 'vitest';
import type { MembershipView } from '../memberships/membership.view.js';
import { SecretBox } from '../integrations/secret-box.js';
import { ok } from '../errors.js';
import type { PlanView } from '../plans/plan.view.js';
import { transactorOver } from '../transactions.js';
import { digestOf } from './link-tokens.js';
import type { PayLinkRecord, PayLinkStatements } from './pay-link-statements.js';
import { PayLinksService, type PaymentEvents } from './pay-links.service.js';

const NOW = new Date('2030-01-01T10:00:00.000Z');
const TOKEN = 'abcdefghijklmnopqrstuvwxyzABCDEF';
const PLAN: PlanView = {
  plan_id: 'p1',
  plan_name: 'Gold',
  plan_price: '10.00',
  plan_currency: 'USD',
  plan_duration: '30 days',
  plan_price_formatted: '$10.00',
  plan_data: { plan_recurring: false, plan_one_time: true },
  plan_targets: [],
};
const MEMBERSHIP: MembershipView = {
  membership_id: 'm1',
  user_id: '42',
  plan_id: 'p1',
  membership_start_date: '2030-01-01T10:00:00.000Z',
  membership_end_date: '2030-01-31T10:00:00.000Z',
  user_name: null,
  plan_name: 'Gold',
  plan_duration: '30 days',
  subscription_id: null,
  subscription_status: null,
  status: 'active',
};

/** A pay link service over twins: one stored link, a checkout, Stripe's session and the events' apply, each recording its calls. */
function serviceWith(
  link: Partial<PayLinkRecord> | null,
  o: { session?: Record<string, unknown> | null; paid?: boolean; membership?: Partial<MembershipView>; plan?: Partial<PlanView> } = {},
) {
  const calls: string[] = [];
  const applied: { id: string; source: string }[] = [];
  const record: PayLinkRecord | null = link && {
    projectId: 'proj',
    planId: 'p1',
    userId: '42',
    coupon: null,
    expiresAt: new Date(NOW.getTime() + 3_600_000),
    merchantAccountId: null,
    sessionId: null,
    sessionUrl: null,
    sessionExpiresAt: null,
    completedAt: null,
    ...link,
  };
  const links: PayLinkStatements = {
    insert: async () => void calls.push('insert'),
    find: async (hash) => (hash === digestOf(TOKEN) ? record : null),
    setSession: async () => void calls.push('setSession'),
    markCompleted: async () => (calls.push('markCompleted'), true),
    sessionPaid: async () => o.paid ?? false,
  };
  const events: PaymentEvents = {
    apply: async (_account, event, source) => {
      applied.push({ id: event.id, source });
      return { event_id: event.id, type: event.type, result: 'applied', outcome: 'applied' };
    },
  };
  const box = SecretBox.ephemeral();
  const service = new PayLinksService(
    transactorOver({ payLinks: links, payments: { isBanned: async () => false } }),
    links,
    { terms: async () => ok({ ...PLAN, ...o.plan }) },
    { create: async () => (calls.push('checkout'), ok({ session_id: 'cs_test_new', checkout_url: 'https://checkout.stripe.com/c/pay/cs_test_new', mode: 'payment', merchant_account_id: 'acct-row', coupon_id: null, coupon_code: null })) },
    { secretsOf: async () => ({ id: 'acct-row', projectId: 'proj', provider: 'stripe', environment: 'sandbox', secretKeySealed: box.seal('sk_test_x'), webhookSecretSealed: null, providerAccountId: 'acct_1' }) },
    { list: async () => ({ items: o.membership ? [{ ...MEMBERSHIP, ...o.membership }] : [], total: 0 }) },
    events,
    { retrieveCheckoutSession: async () => (calls.push('retrieve'), o.session ? { ok: true, session: o.session } : { ok: false, kind: 'unavailable', message: 'down' }) },
    box,
    { now: () => NOW },
    { publicUrl: 'https://members.example.com', ttlMs: 86_400_000 },
  );
  return { service, calls, applied };
}

describe('PayLinksService.open', () => {
  it('answers unknown for an id of another shape without reading, used and expired links without asking Stripe', async () => {
    expect(await serviceWith(null).service.open('../../etc')).toStrictEqual({ kind: 'unknown' });
    const used = serviceWith({ completedAt: NOW });
    expect(await used.service.open(TOKEN)).toStrictEqual({ kind: 'used' });
    const expired = serviceWith({ expiresAt: NOW });
    expect(await expired.service.open(TOKEN)).toStrictEqual({ kind: 'expired' });
    expect([...used.calls, ...expired.calls]).toStrictEqual([]);
  });

  it('goes back to the session the link keeps while Stripe keeps it open; else makes one and keeps it', async () => {
    const kept = serviceWith({ sessionId: 'cs_test_old', sessionUrl: 'https://checkout.stripe.com/c/pay/cs_test_old', sessionExpiresAt: new Date(NOW.getTime() + 1000), merchantAccountId: 'acct-row' });
    expect(await kept.service.open(TOKEN)).toStrictEqual({ kind: 'redirect', url: 'https://checkout.stripe.com/c/pay/cs_test_old' });
    expect(kept.calls).toStrictEqual([]);
    const fresh = serviceWith({});
    expect(await fresh.service.open(TOKEN)).toStrictEqual({ kind: 'redirect', url: 'https://checkout.stripe.com/c/pay/cs_test_new' });
    expect(fresh.calls).toStrictEqual(['checkout', 'setSession']);
  });
});

describe('PayLinksService.done', () => {
  const withSession = { sessionId: 'cs_test_1', sessionUrl: 'https://checkout.stripe.com/c/pay/cs_test_1', merchantAccountId: 'acct-row', sessionExpiresAt: new Date(NOW.getTime() + 1000) };

  it('a payment Stripe\'s event recorded already: completes the link, asks Stripe nothing, applies nothing', async () => {
    const { service, calls, applied } = serviceWith(withSession, { paid: true, membership: {} });
    expect(await service.done(TOKEN)).toStrictEqual({ kind: 'standing', standing: { kind: 'granted', planName: 'Gold', endDate: '2030-01-31T10:00:00.000Z', join: null } });
    expect(calls).toStrictEqual(['markCompleted']);
    expect(applied).toStrictEqual([]);
  });

  it('a paid session whose event has not come: applied once under the page\'s own id, source return', async () => {
    const session = { id: 'cs_test_1', status: 'complete', payment_status: 'paid', created: 1_893_492_000, livemode: false };
    const { service, applied } = serviceWith(withSession, { session, membership: {} });
    expect((await service.done(TOKEN)).kind).toBe('standing');
    expect(applied).toStrictEqual([{ id: 'tenure_return_cs_test_1', source: 'return' }]);
  });

  it('says not paid for an open session, processing for an unpaid complete one, lapsed for an expired one, unavailable when Stripe does not answer', async () => {
    const answer = async (session: Record<string, unknown> | null) => {
      const s = serviceWith(withSession, { session });
      const outcome = await s.service.done(TOKEN);
      expect(s.applied).toStrictEqual([]);
      return outcome.kind === 'standing' ? outcome.standing.kind : outcome.kind;
    };
    expect(await answer({ status: 'open', payment_status: 'unpaid' })).toBe('not-paid');
    expect(await answer({ status: 'complete', payment_status: 'unpaid' })).toBe('processing');
    expect(await answer({ status: 'expired', payment_status: 'unpaid' })).toBe('lapsed');
    expect(await answer(null)).toBe('unavailable');
  });

  it('a link never opened is not paid, payable while valid; an unknown link is unknown', async () => {
    expect(await serviceWith({}).service.done(TOKEN)).toStrictEqual({ kind: 'standing', standing: { kind: 'not-paid', planName: 'Gold', canPay: true } });
    expect(await serviceWith(null).service.done(TOKEN)).toStrictEqual({ kind: 'unknown' });
  });
});

describe('PayLinksService.create', () => {
  it('refuses a plan Stripe cannot sell before storing anything', async () => {
    const { service, calls } = serviceWith(null, { plan: { plan_price: '0.00' } });
    const result = await service.create('proj', { planId: 'p1', userId: '42' });
    expect(result.ok).toBe(false);
    expect(calls).toStrictEqual([]);
  });

  it('stores a new link for the member, 24 hours, at the public address', async () => {
    const { service, calls } = serviceWith(null);
    const result = await service.create('proj', { planId: 'p1', userId: '42' });
    expect(result.ok && result.value.url).toMatch(/^https:\/\/members\.example\.com\/pay\/[A-Za-z0-9_-]{32}$/);
    expect(result.ok && result.value.expires_at).toBe('2030-01-02T10:00:00.000Z');
    expect(calls).toStrictEqual(['insert']);
  });
});
