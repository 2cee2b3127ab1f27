import type { Buyer } from './stripe-events.js';

/**
 * What a provider's event does to payments and memberships once it is read (docs/payments.md,
 * "What each Stripe event does"): who paid, whether a payment may grant, what a subscription's
 * status does to access, and the outcome of applying an event in words (kept in
 * `payment_events.outcome` and answered to the webhook). Pure: the store runs the reads and the
 * guarded writes in one transaction, asks here what to do, and reports back what its writes found.
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
 * without metadata, whoever holds the subscription (the store looks the holder up); null: no one.
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

/** What applying an event did, as the store's reads and guarded writes found it. */
export type Outcome =
  | { kind: 'ignored'; reason: string }
  /** A session expired unpaid: the coupons whose use it held were given back (none: it held none). */
  | { kind: 'session-expired'; releasedCodes: readonly string[] }
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
  /** A refund or dispute: `marked` when a succeeded payment was marked; `ended` when a membership ended. */
  | { kind: 'reversed'; paymentIntentId: string; status: 'refunded' | 'disputed'; marked: boolean; ended: boolean };

/** The outcome in words: `applied: …` (something changed), `ignored: …`, `recorded already: …` or `recorded; …`. */
export function outcomeSentence(o: Outcome): string {
  switch (o.kind) {
    case 'ignored':
      return `ignored: ${o.reason}`;
    case 'session-expired':
      return o.releasedCodes.length > 0
        ? `applied: the use of coupon ${o.releasedCodes.join(', ')} reserved by the session is given back`
        : 'ignored: the session held no coupon use';
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
      if (!o.marked) return `ignored: no succeeded payment of ${o.paymentIntentId} (unknown, or ${o.status} already)`;
      return o.ended ? `applied: payment ${o.status}, membership ended` : `applied: payment ${o.status}, membership had ended already`;
  }
}
