import { describe, expect, it } from 'vitest';
import { arrivalAction, buyerIn, ENDING_STATUSES, grantRefusal, outcomeSentence, payerOf, reversalAction, statusAction, type Outcome } from './payment-rules.js';

const BUYER = { projectId: 'p1', planId: 'q1', userId: '42' };
const NOW = new Date('2026-06-01T00:00:00.000Z');
const DAY = 86_400_000;

describe('what an applied payment event does', () => {
  it('counts the buyer an event names only in its own project; a renewal without one is paid by the holder of its subscription', () => {
    expect(buyerIn('p1', BUYER)).toStrictEqual(BUYER);
    expect(buyerIn('p2', BUYER)).toBeNull();
    expect(buyerIn('p1', null)).toBeNull();
    expect(payerOf('p1', BUYER, 'sub_1')).toStrictEqual({ buyer: BUYER });
    // Metadata naming another project is not replaced by the subscription's holder.
    expect(payerOf('p2', BUYER, 'sub_1')).toBeNull();
    expect(payerOf('p1', null, 'sub_1')).toStrictEqual({ holderOf: 'sub_1' });
    expect(payerOf('p1', null, null)).toBeNull();
  });

  it('a recorded payment grants unless its plan is gone or its subscription ended after it; the plan is asked first', () => {
    expect(grantRefusal({ planExists: true, endedAfterPayment: false })).toBeNull();
    expect(grantRefusal({ planExists: true, endedAfterPayment: true })).toBe('ended-after-payment');
    expect(grantRefusal({ planExists: false, endedAfterPayment: true })).toBe('plan-gone');
    expect(grantRefusal({ planExists: false, endedAfterPayment: false })).toBe('plan-gone');
  });

  it('a reversal ends access when it marks its payment, is held when the payment is not recorded yet, and does nothing to a payment reversed already', () => {
    expect(reversalAction({ marked: true, recorded: true })).toBe('end');
    expect(reversalAction({ marked: false, recorded: false })).toBe('hold');
    expect(reversalAction({ marked: false, recorded: true })).toBe('none');
  });

  it('a payment arriving after its reversal is reversed at once instead of granting; without one it grants', () => {
    expect(arrivalAction(null)).toStrictEqual({ kind: 'grant' });
    expect(arrivalAction('refunded')).toStrictEqual({ kind: 'reverse', status: 'refunded' });
    expect(arrivalAction('disputed')).toStrictEqual({ kind: 'reverse', status: 'disputed' });
  });

  it('ending statuses end access now; past_due keeps it for the grace period past now; the rest are recorded', () => {
    expect([...ENDING_STATUSES].sort()).toStrictEqual(['canceled', 'incomplete_expired', 'unpaid']);
    for (const status of ENDING_STATUSES) expect(statusAction(status, NOW, 3 * DAY)).toStrictEqual({ kind: 'end' });
    expect(statusAction('past_due', NOW, 3 * DAY)).toStrictEqual({ kind: 'keep', until: new Date('2026-06-04T00:00:00.000Z') });
    // No grace period configured: past_due changes nothing, the subscription's end decides.
    expect(statusAction('past_due', NOW, 0)).toStrictEqual({ kind: 'record' });
    for (const status of ['active', 'trialing', 'incomplete', 'paused', 'unknown']) expect(statusAction(status, NOW, 3 * DAY)).toStrictEqual({ kind: 'record' });
  });

  it('words each outcome as payment_events.outcome keeps it', () => {
    const cases: [Outcome, string][] = [
      [{ kind: 'ignored', reason: 'a partial refund' }, 'ignored: a partial refund'],
      [{ kind: 'session-expired', releasedCodes: ['SPRING25'] }, 'applied: the use of coupon SPRING25 reserved by the session is given back'],
      [{ kind: 'session-expired', releasedCodes: ['A', 'B'] }, 'applied: the use of coupon A, B reserved by the session is given back'],
      [{ kind: 'session-expired', releasedCodes: [] }, 'ignored: the session held no coupon use'],
      [{ kind: 'no-member' }, 'ignored: the payment names no member of this project'],
      [{ kind: 'paid-already' }, 'recorded already: the payment was applied by another event'],
      [{ kind: 'not-granted', why: 'plan-gone' }, 'recorded; no membership change: the plan no longer exists'],
      [{ kind: 'not-granted', why: 'ended-after-payment' }, 'recorded; no membership change: the subscription ended after this payment'],
      [{ kind: 'extended' }, 'applied: membership extended by the plan duration'],
      [{ kind: 'create', created: true, banned: false }, 'applied: membership created'],
      [{ kind: 'create', created: false, banned: true }, 'recorded; no membership: the user is banned'],
      [{ kind: 'create', created: false, banned: false }, 'recorded; no membership change: created concurrently'],
      [{ kind: 'failed', recorded: true }, 'applied: payment failed recorded'],
      [{ kind: 'failed', recorded: false }, 'recorded already: the invoice has a payment'],
      [{ kind: 'status-not-set', subscriptionId: 'sub_1' }, 'ignored: no membership holds subscription sub_1, or a later event set its status'],
      [{ kind: 'status-set', status: 'canceled', action: 'end', changed: true }, 'applied: subscription canceled, membership ended'],
      [{ kind: 'status-set', status: 'unpaid', action: 'end', changed: false }, 'applied: subscription unpaid, membership had ended already'],
      [{ kind: 'status-set', status: 'past_due', action: 'keep', changed: true }, 'applied: subscription past_due, access kept for the grace period'],
      [{ kind: 'status-set', status: 'past_due', action: 'keep', changed: false }, 'applied: subscription past_due, paid through the grace period already'],
      [{ kind: 'status-set', status: 'active', action: 'record', changed: false }, 'applied: subscription active'],
      [{ kind: 'reversed', paymentIntentId: 'pi_1', status: 'refunded', marked: true, ended: true }, 'applied: payment refunded, membership ended'],
      [{ kind: 'reversed', paymentIntentId: 'pi_1', status: 'disputed', marked: true, ended: false }, 'applied: payment disputed, membership had ended already'],
      [{ kind: 'reversed', paymentIntentId: 'pi_1', status: 'refunded', marked: false, ended: false }, 'ignored: the payment of pi_1 is reversed already'],
      [{ kind: 'reversal-held', paymentIntentId: 'pi_1', status: 'refunded', held: true }, 'recorded; no payment of pi_1 yet: it will be recorded refunded when it arrives, and grant nothing'],
      [{ kind: 'reversal-held', paymentIntentId: 'pi_1', status: 'disputed', held: false }, 'ignored: no payment of pi_1 yet, and a reversal of it is held already'],
      [{ kind: 'arrived-reversed', status: 'refunded', ended: false }, 'applied: payment recorded refunded (its refund came first), no membership granted'],
      [{ kind: 'arrived-reversed', status: 'disputed', ended: true }, 'applied: payment recorded disputed (its dispute came first), no membership granted, membership ended'],
    ];
    for (const [outcome, sentence] of cases) expect(outcomeSentence(outcome), JSON.stringify(outcome)).toBe(sentence);
  });
});
