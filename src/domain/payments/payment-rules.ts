import type { Buyer } from './stripe-events.js';

/**
 * What a provider's event does to payments and memberships once it is read (docs/payments.md,
 * "What each Stripe event does"): who paid, whether a payment may grant, what a subscription's
 * status does to access, and the outcome of applying an event in words (kept in
 * `payment_events.outcome` and answered to the webhook). Pure: StripeEventsService runs the reads
 * and the guarded writes in one transaction and asks here what to do between them.
 */

/**
 * Subscription statuses that end access at once: Stripe gave up (`unpaid` after its retries,
 * `incomplete_expired`) or the subscription ended (`canceled`). `past_due` keeps it through the
 * grace period; the rest (`active`, `trialing`, `incomplete`, `paused`) change nothing.
 */
export const ENDING_STATUSES: readonly string[] = ['canceled', 'unpaid', 'incomplete_expired'];

/** The buyer an event names, if of this project: a checkout's metadata naming another project names no one here. */
export function buyerIn(projectId: string, buyer: Buyer | null): Buyer | null {
  return buyer && buyer.projectId === projectId ? buyer : null;
}

/**
 * Who paid: the buyer the event names (none, if of another project), else, for a renewal's invoice
 * without metadata, whoever holds the subscription (looked up in the event's transaction); null: no one.
 */
export function payerOf(projectId: string, buyer: Buyer | null, subscriptionId: string | null): { buyer: Buyer } | { holderOf: string } | null {
  if (buyer) return buyer.projectId === projectId ? { buyer } : null;
  return subscriptionId ? { holderOf: subscriptionId } : null;
}

/** Why a recorded payment changes no membership; null: it grants. */
export type GrantRefusal = 'plan-gone' | 'ended-after-payment';

/**
 * Whether a payment, recorded for the first time, grants its plan: not when the plan no longer
 * exists, nor when its subscription took an ending status from an event later than the payment
 * (events out of order: a late payment does not revive it). A grant extends the member's
 * membership by the plan's duration, or creates one unless the user is banned.
 */
export function grantRefusal(found: { planExists: boolean; endedAfterPayment: boolean }): GrantRefusal | null {
  if (!found.planExists) return 'plan-gone';
  return found.endedAfterPayment ? 'ended-after-payment' : null;
}

/** What a full refund or a dispute makes of its payment. */
export type ReversalStatus = 'refunded' | 'disputed';

/**
 * What a refund or dispute does once the service tried to mark its payment (a succeeded payment
 * of its payment intent): a payment marked ends its member's membership now; none recorded yet
 * (Stripe does not promise order: the reversal came first) holds the reversal for the payment to
 * meet when it arrives; one recorded but not succeeded (reversed already) changes nothing.
 */
export function reversalAction(found: { marked: boolean; recorded: boolean }): 'end' | 'hold' | 'none' {
  if (found.marked) return 'end';
  return found.recorded ? 'none' : 'hold';
}

/**
 * What a payment does when it is recorded, given the reversal held for it (null: none): it grants
 * (unless grantRefusal says no), or, reversed before it arrived, it is recorded reversed at once
 * and grants nothing. Its member's membership then ends now, as the reversal ends it when it comes
 * second (a refunded renewal ends access), so either order leaves the same access.
 */
export function arrivalAction(held: ReversalStatus | null): { kind: 'grant' } | { kind: 'reverse'; status: ReversalStatus } {
  return held ? { kind: 'reverse', status: held } : { kind: 'grant' };
}

/** What a subscription's new status does to its memberships. */
export type StatusAction = { kind: 'end' } | { kind: 'keep'; until: Date } | { kind: 'record' };

/**
 * An ending status ends access now; `past_due` keeps it until `now` + the grace period (when the
 * period is not zero), for a renewal that may still be paid; any other status is only recorded.
 */
export function statusAction(status: string, now: Date, graceMs: number): StatusAction {
  if (ENDING_STATUSES.includes(status)) return { kind: 'end' };
  if (status === 'past_due' && graceMs > 0) return { kind: 'keep', until: new Date(now.getTime() + graceMs) };
  return { kind: 'record' };
}

/** What applying an event did, as its reads and guarded writes found it. */
export type Outcome =
  | { kind: 'ignored'; reason: string }
  /** A session expired unpaid: the coupons whose use it held were given back (none: it held none). */
  | { kind: 'session-expired'; releasedCodes: readonly string[]; trialReleased?: boolean }
  /** A trial began: the membership made or kept until its end (or not: the user is banned). */
  | { kind: 'trial-started'; granted: 'created' | 'extended' | 'banned'; trialEnd: Date }
  /** The member's trial had started already (the trial's other event, or an earlier trial). */
  | { kind: 'trial-already' }
  /** A payment or failed payment whose buyer is not a member of this project. */
  | { kind: 'no-member' }
  /** The payment was recorded by another event (a subscription's first invoice comes twice). */
  | { kind: 'paid-already' }
  | { kind: 'not-granted'; why: GrantRefusal }
  | { kind: 'extended' }
  /** The membership insert: made, or not because the user is banned or it was made concurrently. */
  | { kind: 'create'; created: boolean; banned: boolean }
  /** A failed payment: recorded, or the invoice has a payment already. */
  | { kind: 'failed'; recorded: boolean }
  /** No membership holds the subscription, or a later event set its status. */
  | { kind: 'status-not-set'; subscriptionId: string }
  /** The status was set and its action run: `changed` when it ended or kept a membership. */
  | { kind: 'status-set'; status: string; action: StatusAction['kind']; changed: boolean }
  /** A refund or dispute of a recorded payment: `marked` when it was succeeded and is marked (else it was reversed already); `ended` when a membership ended. */
  | { kind: 'reversed'; paymentIntentId: string; status: ReversalStatus; marked: boolean; ended: boolean }
  /** A refund or dispute of a payment not recorded yet: `held` for it, or not because another reversal of it is held already. */
  | { kind: 'reversal-held'; paymentIntentId: string; status: ReversalStatus; held: boolean }
  /** A payment recorded for the first time whose reversal came before it: recorded reversed, no grant; `ended` when a membership ended. */
  | { kind: 'arrived-reversed'; status: ReversalStatus; ended: boolean };

/** The outcome in words: `applied: …` (something changed), `ignored: …`, `recorded already: …` or `recorded; …`. */
export function outcomeSentence(o: Outcome): string {
  switch (o.kind) {
    case 'ignored':
      return `ignored: ${o.reason}`;
    case 'session-expired': {
      const trial = o.trialReleased ? 'the trial it reserved is given back' : null;
      if (o.releasedCodes.length > 0) return `applied: the use of coupon ${o.releasedCodes.join(', ')} reserved by the session is given back${trial ? `, and ${trial}` : ''}`;
      return trial ? `applied: ${trial}` : 'ignored: the session held no coupon use';
    }
    case 'trial-started':
      return o.granted === 'banned'
        ? 'recorded; no membership: the user is banned'
        : `applied: trial started, membership ${o.granted === 'created' ? 'created' : 'kept'} until ${o.trialEnd.toISOString()}`;
    case 'trial-already':
      return 'recorded already: the trial was started by another event (or the member had one before)';
    case 'no-member':
      return 'ignored: the payment names no member of this project';
    case 'paid-already':
      return 'recorded already: the payment was applied by another event';
    case 'not-granted':
      return o.why === 'plan-gone'
        ? 'recorded; no membership change: the plan no longer exists'
        : 'recorded; no membership change: the subscription ended after this payment';
    case 'extended':
      return 'applied: membership extended by the plan duration';
    case 'create':
      if (o.created) return 'applied: membership created';
      return o.banned ? 'recorded; no membership: the user is banned' : 'recorded; no membership change: created concurrently';
    case 'failed':
      return o.recorded ? 'applied: payment failed recorded' : 'recorded already: the invoice has a payment';
    case 'status-not-set':
      return `ignored: no membership holds subscription ${o.subscriptionId}, or a later event set its status`;
    case 'status-set':
      if (o.action === 'record') return `applied: subscription ${o.status}`;
      if (o.action === 'end') return o.changed ? `applied: subscription ${o.status}, membership ended` : `applied: subscription ${o.status}, membership had ended already`;
      return o.changed ? `applied: subscription ${o.status}, access kept for the grace period` : `applied: subscription ${o.status}, paid through the grace period already`;
    case 'reversed':
      if (!o.marked) return `ignored: the payment of ${o.paymentIntentId} is reversed already`;
      return o.ended ? `applied: payment ${o.status}, membership ended` : `applied: payment ${o.status}, membership had ended already`;
    case 'reversal-held':
      return o.held
        ? `recorded; no payment of ${o.paymentIntentId} yet: it will be recorded ${o.status} when it arrives, and grant nothing`
        : `ignored: no payment of ${o.paymentIntentId} yet, and a reversal of it is held already`;
    case 'arrived-reversed': {
      const first = o.status === 'refunded' ? 'its refund' : 'its dispute';
      return `applied: payment recorded ${o.status} (${first} came first), no membership granted${o.ended ? ', membership ended' : ''}`;
    }
  }
}
