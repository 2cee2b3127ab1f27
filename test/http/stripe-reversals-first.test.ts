import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import type { StripeEvent } from '../support/fake-stripe-model.js';
import { eventRows, projectState } from '../support/api.js';
import { useHarness, type Harness, type Tenant } from '../support/harness.js';
import { checkoutStarted, deliverAll, membershipOf, pick, type ConnectedStripe } from '../support/payments.js';

/**
 * A refund or dispute that reaches tenure before the payment it reverses (docs/payments.md, "Out
 * of order"): held, and the payment, when it arrives, is recorded reversed and grants nothing, so
 * the member ends with the access they would have had in Stripe's order. Events made by the fake
 * Stripe's world, signed with stripe-node's generateTestHeaderString, delivered to the real app.
 */

const field = (event: StripeEvent, name: string) => (event.data.object as Record<string, string>)[name]!;



async function payments(t: Tenant) {
  const res = await t.request({ method: 'GET', url: `${t.base}/payments` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { status: string; payment_intent_id: string | null; invoice_id: string | null }[];
}

/** The project's payment and membership events, in order. */
const story = async (h: Harness, t: Tenant) => (await eventRows(h, t.projectId)).map((e) => e.type).filter((x) => /^(payment|membership)\./.test(x));

const held = async (h: Harness, t: Tenant) =>
  rowsOf<{ payment_intent_id: string; status: string }>(await h.database.db.execute(sql`SELECT payment_intent_id, status FROM held_reversals WHERE project_id = ${t.projectId}`));

const outcomes = async (h: Harness, stripe: ConnectedStripe, events: StripeEvent[]) => (await deliverAll(h, stripe, events)).map((r) => r.outcome);

describe('a refund or dispute delivered before its payment', () => {
  const h = useHarness();

  it('a full refund before checkout.session.completed (one-time): held; the payment is recorded refunded, no membership; redeliveries change nothing', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h);
    const paid = h.stripe.world.pay(session.session_id);
    const pi = field(pick(paid, 'charge.succeeded'), 'payment_intent');
    const refund = h.stripe.world.refund(pi);
    expect(await outcomes(h, stripe, refund)).toStrictEqual([`recorded; no payment of ${pi} yet: it will be recorded refunded when it arrives, and grant nothing`]);
    expect(await held(h, t)).toStrictEqual([{ payment_intent_id: pi, status: 'refunded' }]);
    // Stripe redelivers the refund: a duplicate, nothing changes.
    const before = await projectState(h, t.projectId);
    expect((await deliverAll(h, stripe, refund)).map((r) => r.result)).toStrictEqual(['duplicate']);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);

    expect(await outcomes(h, stripe, paid)).toStrictEqual([
      'ignored: tenure does not act on charge.succeeded',
      'applied: payment recorded refunded (its refund came first), no membership granted',
    ]);
    expect(await membershipOf(t, user)).toBeUndefined();
    expect(await payments(t)).toMatchObject([{ status: 'refunded', payment_intent_id: pi }]);
    // The payment's story as in Stripe's order, without the access it never kept.
    expect(await story(h, t)).toStrictEqual(['payment.succeeded', 'payment.refunded']);
    const [succeeded, refunded] = (await eventRows(h, t.projectId)).filter((e) => e.type.startsWith('payment.')).map((e) => (e.data as { payment: Record<string, unknown> }).payment);
    expect(succeeded).toMatchObject({ status: 'succeeded', payment_intent_id: pi, user_id: user });
    expect(refunded).toMatchObject({ status: 'refunded', payment_id: succeeded!.payment_id });
    expect(await held(h, t)).toStrictEqual([]);

    // Delivered again, the payment is a duplicate; a dispute of it now finds it reversed already.
    const after = await projectState(h, t.projectId);
    expect((await deliverAll(h, stripe, paid)).map((r) => r.result)).toStrictEqual(['duplicate', 'duplicate']);
    expect(await projectState(h, t.projectId)).toStrictEqual(after);
    expect(await outcomes(h, stripe, h.stripe.world.dispute(pi))).toStrictEqual([`ignored: the payment of ${pi} is reversed already`]);
    expect(await story(h, t)).toStrictEqual(['payment.succeeded', 'payment.refunded']);
  });

  it('a dispute before a subscription\u2019s invoice.paid: the first payment is recorded disputed, the session\u2019s completion after it grants nothing', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h, { recurring: true });
    const paid = h.stripe.world.pay(session.session_id);
    const pi = field(pick(paid, 'charge.succeeded'), 'payment_intent');
    expect(await outcomes(h, stripe, h.stripe.world.dispute(pi))).toStrictEqual([`recorded; no payment of ${pi} yet: it will be recorded disputed when it arrives, and grant nothing`]);
    expect(await outcomes(h, stripe, [pick(paid, 'invoice.paid'), pick(paid, 'checkout.session.completed')])).toStrictEqual([
      'applied: payment recorded disputed (its dispute came first), no membership granted',
      'recorded already: the payment was applied by another event',
    ]);
    expect(await membershipOf(t, user)).toBeUndefined();
    expect(await payments(t)).toMatchObject([{ status: 'disputed', payment_intent_id: pi, invoice_id: field(pick(paid, 'invoice.paid'), 'id') }]);
    expect(await story(h, t)).toStrictEqual(['payment.succeeded', 'payment.disputed']);
    expect(await held(h, t)).toStrictEqual([]);
  });

  it('when the session\u2019s completion (which names no payment intent) records the subscription\u2019s payment first, its invoice.paid meets the held dispute and ends the membership', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h, { recurring: true });
    const paid = h.stripe.world.pay(session.session_id);
    const pi = field(pick(paid, 'charge.succeeded'), 'payment_intent');
    await deliverAll(h, stripe, h.stripe.world.dispute(pi));
    expect(await outcomes(h, stripe, [pick(paid, 'checkout.session.completed'), pick(paid, 'invoice.paid')])).toStrictEqual([
      'applied: membership created',
      'applied: payment disputed, membership ended',
    ]);
    const m = await membershipOf(t, user);
    expect(m!.status).toBe('expired');
    expect(Date.parse(m!.membership_end_date)).toBeLessThanOrEqual(Date.now());
    expect(await payments(t)).toMatchObject([{ status: 'disputed', payment_intent_id: pi }]);
    // As if the dispute came last: the order Stripe made them in.
    expect(await story(h, t)).toStrictEqual(['payment.succeeded', 'membership.created', 'payment.disputed', 'membership.expired']);
    expect(await held(h, t)).toStrictEqual([]);
  });

  it('a renewal refunded before its invoice.paid: the renewal is recorded refunded and the membership ends now, as an in-order refund ends it', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h, { recurring: true });
    const first = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, first);
    const sub = field(pick(first, 'checkout.session.completed'), 'subscription');
    const renewal = h.stripe.world.renew(sub);
    const pi = field(pick(renewal, 'charge.succeeded'), 'payment_intent');
    await deliverAll(h, stripe, h.stripe.world.refund(pi));
    expect((await membershipOf(t, user))!.status).toBe('active');
    expect((await outcomes(h, stripe, renewal)).at(-1)).toBe('applied: payment recorded refunded (its refund came first), no membership granted, membership ended');
    const m = await membershipOf(t, user);
    expect(m).toMatchObject({ status: 'expired', subscription_id: sub });
    expect(Date.parse(m!.membership_end_date)).toBeLessThanOrEqual(Date.now());
    expect((await payments(t)).map((p) => p.status)).toStrictEqual(['refunded', 'succeeded']);
    expect(await story(h, t)).toStrictEqual(['payment.succeeded', 'membership.created', 'payment.succeeded', 'payment.refunded', 'membership.expired']);
  });

  it('a reversal whose payment never comes stays held and changes nothing else: other payments grant, a second reversal of it is ignored', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h);
    const never = 'pi_neverrecorded0000000001';
    const dispute = h.stripe.world.emit(stripe.account, 'charge.dispute.created', { id: 'dp_never1', object: 'dispute', payment_intent: never, charge: 'ch_never1', amount: 1000, currency: 'usd' });
    const refund = h.stripe.world.emit(stripe.account, 'charge.refunded', { id: 'ch_never1', object: 'charge', payment_intent: never, refunded: true, amount: 1000, amount_refunded: 1000 });
    expect(await outcomes(h, stripe, [dispute, refund])).toStrictEqual([
      `recorded; no payment of ${never} yet: it will be recorded disputed when it arrives, and grant nothing`,
      `ignored: no payment of ${never} yet, and a reversal of it is held already`,
    ]);
    expect(await held(h, t)).toStrictEqual([{ payment_intent_id: never, status: 'disputed' }]);
    // The member's own payment is another payment intent: it grants as ever.
    expect((await outcomes(h, stripe, h.stripe.world.pay(session.session_id))).at(-1)).toBe('applied: membership created');
    expect((await membershipOf(t, user))!.status).toBe('active');
    expect(await story(h, t)).toStrictEqual(['payment.succeeded', 'membership.created']);
    expect(await held(h, t)).toStrictEqual([{ payment_intent_id: never, status: 'disputed' }]);
  });
});
