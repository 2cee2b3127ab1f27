import { describe, expect, it } from 'vitest';
import type { StripeEventLike } from './stripe-api.js';
import { buyerOf, changeOf, sessionEmail, trialDaysOf } from './stripe-events.js';

const META = { project_id: 'p1', plan_id: 'q1', user_id: '42' };
const BUYER = { projectId: 'p1', planId: 'q1', userId: '42' };
const ev = (type: string, object: Record<string, unknown>): StripeEventLike => ({ id: 'evt_1', type, created: 1, livemode: false, data: { object } });

describe('what a Stripe event means', () => {
  it('reads the buyer from a checkout\'s metadata only when all three are there', () => {
    expect(buyerOf(META)).toStrictEqual(BUYER);
    expect(buyerOf({ project_id: 'p1', plan_id: 'q1' })).toBeNull();
    expect(buyerOf(null)).toBeNull();
  });

  it('a paid one-time session is a payment keyed by its payment intent; a subscription session by its first invoice', () => {
    const session = { id: 'cs_1', payment_status: 'paid', metadata: META, amount_total: 999, currency: 'usd', customer: 'cus_1' };
    expect(changeOf(ev('checkout.session.completed', { ...session, mode: 'payment', payment_intent: 'pi_1' }))).toMatchObject({ kind: 'paid', key: 'pi_1', buyer: BUYER, amountMinor: 999, currency: 'USD' });
    expect(changeOf(ev('checkout.session.completed', { ...session, mode: 'subscription', subscription: 'sub_1', invoice: 'in_1' }))).toMatchObject({ kind: 'paid', key: 'in_1', subscriptionId: 'sub_1' });
    expect(changeOf(ev('checkout.session.completed', { ...session, mode: 'payment', payment_status: 'unpaid' }))).toMatchObject({ kind: 'ignored' });
    expect(changeOf(ev('checkout.session.async_payment_succeeded', { ...session, mode: 'payment', payment_status: 'unpaid', payment_intent: 'pi_2' }))).toMatchObject({ kind: 'paid', key: 'pi_2' });
  });

  it('an expired session gives back the coupon use it reserved, found by its id', () => {
    expect(changeOf(ev('checkout.session.expired', { id: 'cs_9', status: 'expired', payment_status: 'unpaid' }))).toStrictEqual({ kind: 'expired', sessionId: 'cs_9' });
    expect(changeOf(ev('checkout.session.expired', {}))).toMatchObject({ kind: 'ignored', reason: 'a session without an id' });
  });

  it('reads an invoice in the current shape and the one before API 2025-03-31', () => {
    const current = { id: 'in_1', amount_paid: 500, currency: 'eur', parent: { subscription_details: { subscription: 'sub_1', metadata: META } }, payments: { data: [{ payment: { payment_intent: 'pi_1' } }] } };
    const legacy = { id: 'in_1', amount_paid: 500, currency: 'eur', subscription: 'sub_1', subscription_details: { metadata: META }, payment_intent: 'pi_1' };
    for (const invoice of [current, legacy]) {
      expect(changeOf(ev('invoice.paid', invoice))).toStrictEqual({
        kind: 'paid', key: 'in_1', buyer: BUYER, amountMinor: 500, currency: 'EUR', checkoutSessionId: null, paymentIntentId: 'pi_1', invoiceId: 'in_1', subscriptionId: 'sub_1', customerId: null,
      });
    }
    expect(changeOf(ev('invoice.paid', { id: 'in_2', amount_paid: 1 }))).toMatchObject({ kind: 'ignored', reason: 'an invoice of no subscription' });
  });

  it('reads a failed invoice as a paid one is read, in both shapes: a failed payment of the amount due, keyed by the invoice', () => {
    const current = { id: 'in_1', amount_due: 500, amount_paid: 0, currency: 'eur', customer: 'cus_1', parent: { subscription_details: { subscription: 'sub_1', metadata: META } } };
    const legacy = { id: 'in_1', amount_due: 500, amount_paid: 0, currency: 'eur', customer: { id: 'cus_1' }, subscription: 'sub_1', subscription_details: { metadata: META } };
    for (const invoice of [current, legacy]) {
      expect(changeOf(ev('invoice.payment_failed', invoice))).toStrictEqual({
        kind: 'failed', key: 'in_1', buyer: BUYER, amountMinor: 500, currency: 'EUR', invoiceId: 'in_1', subscriptionId: 'sub_1', customerId: 'cus_1',
      });
    }
    // A renewal's invoice may carry no metadata: the subscription's holder is the buyer then.
    expect(changeOf(ev('invoice.payment_failed', { id: 'in_3', amount_due: 500, currency: 'usd', subscription: 'sub_1' }))).toMatchObject({ kind: 'failed', buyer: null });
    expect(changeOf(ev('invoice.payment_failed', { subscription: 'sub_1', amount_due: 1 }))).toMatchObject({ kind: 'ignored', reason: 'an invoice of no subscription' });
  });

  it('subscription updates and deletions, full refunds and disputes', () => {
    expect(changeOf(ev('customer.subscription.updated', { id: 'sub_1', status: 'past_due' }))).toStrictEqual({ kind: 'subscription', subscriptionId: 'sub_1', status: 'past_due', buyer: null, cancelAtPeriodEnd: false });
    // Ending with the paid period, either way Stripe says it; a deletion says nothing of it.
    expect(changeOf(ev('customer.subscription.updated', { id: 'sub_1', status: 'active', cancel_at_period_end: true }))).toMatchObject({ cancelAtPeriodEnd: true });
    expect(changeOf(ev('customer.subscription.updated', { id: 'sub_1', status: 'active', cancel_at_period_end: false, cancel_at: 1_900_000_000 }))).toMatchObject({ cancelAtPeriodEnd: true });
    expect(changeOf(ev('customer.subscription.deleted', { id: 'sub_1', status: 'active' }))).toMatchObject({ status: 'canceled', cancelAtPeriodEnd: null });
    expect(changeOf(ev('charge.refunded', { payment_intent: 'pi_1', refunded: true }))).toStrictEqual({ kind: 'reversed', paymentIntentId: 'pi_1', status: 'refunded' });
    expect(changeOf(ev('charge.refunded', { payment_intent: 'pi_1', refunded: false }))).toMatchObject({ kind: 'ignored', reason: 'a partial refund' });
    expect(changeOf(ev('charge.dispute.created', { payment_intent: { id: 'pi_1' } }))).toStrictEqual({ kind: 'reversed', paymentIntentId: 'pi_1', status: 'disputed' });
    expect(changeOf(ev('customer.created', {}))).toMatchObject({ kind: 'ignored', reason: 'tenure does not act on customer.created' });
  });

  it('a trial starts from the session completed with no payment required, or from its $0 first invoice; a renewal of the same subscription is a payment', () => {
    const trialMeta = { ...META, trial_days: '7' };
    const session = { id: 'cs_1', mode: 'subscription', payment_status: 'no_payment_required', metadata: trialMeta, amount_total: 0, currency: 'usd', subscription: 'sub_1', invoice: 'in_0', customer: 'cus_1' };
    expect(changeOf(ev('checkout.session.completed', session))).toStrictEqual({
      kind: 'trial', buyer: BUYER, trialDays: 7, checkoutSessionId: 'cs_1', invoiceId: 'in_0', subscriptionId: 'sub_1', customerId: 'cus_1', email: null,
    });
    // Without the checkout's trial_days, nothing to pay is not a trial of tenure's.
    expect(changeOf(ev('checkout.session.completed', { ...session, metadata: META }))).toMatchObject({ kind: 'ignored' });
    const details = { subscription_details: { subscription: 'sub_1', metadata: trialMeta } };
    const zero = { id: 'in_0', amount_paid: 0, currency: 'usd', billing_reason: 'subscription_create', parent: details };
    expect(changeOf(ev('invoice.paid', zero))).toMatchObject({ kind: 'trial', trialDays: 7, invoiceId: 'in_0', checkoutSessionId: null });
    expect(changeOf(ev('invoice.paid', { ...zero, id: 'in_1', amount_paid: 1000, billing_reason: 'subscription_cycle' }))).toMatchObject({ kind: 'paid', key: 'in_1', amountMinor: 1000 });
  });

  it('reads trial_days and the e-mail only as the checkout wrote them', () => {
    expect(trialDaysOf({ trial_days: '730' })).toBe(730);
    for (const bad of ['0', '731', '07', '1.5', '', 7]) expect(trialDaysOf({ trial_days: bad })).toBeNull();
    const completed = { customer_details: { email: 'ada@example.com' }, metadata: { collect_email: 'true' } };
    expect(sessionEmail(completed)).toBe('ada@example.com');
    expect(sessionEmail({ ...completed, metadata: {} })).toBeNull();
    expect(sessionEmail({ customer_email: 'bob@example.com', metadata: { collect_email: 'true' } })).toBe('bob@example.com');
    expect(sessionEmail({ customer_details: { email: 'not an address' }, metadata: { collect_email: 'true' } })).toBeNull();
  });
});
