import type { ReversalStatus } from './payment-rules.js';
import type { Buyer, PaymentChange } from './stripe-events.js';

/**
 * The statements applying a Stripe event runs (StripeEventsService, in one transaction): each one
 * statement of a store bound to the transaction, deciding nothing; which to run, and what their
 * answers mean, is the service's (payment-rules.ts). Every write carries its outbox events in the
 * same statement. src/store implements them; unit tests give small twins.
 */

/** A provider's event as `payment_events` records it. */
export interface EventMeta {
  merchantAccountId: string;
  projectId: string;
  eventId: string;
  type: string;
  /** When the provider created the event: orders subscription statuses. */
  createdAt: Date;
  source: EventSource;
}

/**
 * How an event reached tenure first: Stripe's delivery, reconciliation's listing, or the member
 * coming back to a pay link's done page, which reads the session itself (docs/front-desk.md).
 */
/** `portal`: the member's own change in the portal, as Stripe answered it (docs/portal.md). */
export type EventSource = 'webhook' | 'reconcile' | 'return' | 'portal';

export type Paid = Extract<PaymentChange, { kind: 'paid' }>;
export type Failed = Extract<PaymentChange, { kind: 'failed' }>;
export type TrialStart = Extract<PaymentChange, { kind: 'trial' }>;

/** `payment_events`: each event id of an account once. */
export interface StripeEventLog {
  /** Records the event as being applied; false when its id is there already (a duplicate). */
  recordOnce(meta: EventMeta): Promise<boolean>;
  /** What applying it did, in words. */
  setOutcome(meta: EventMeta, outcome: string): Promise<void>;
}

/** A payment's row as an event records it: its project and account, and who paid. */
export interface PaymentOf {
  projectId: string;
  merchantAccountId: string;
  buyer: Buyer;
}

/** `payments` as the provider's events write them, each write with its `payment.*` event. */
export interface PaymentStatements {
  /** The failed payment of `p.key` succeeds (a renewal retried and paid); false when there is no failed one. */
  succeedFailed(projectId: string, p: Paid, now: Date): Promise<boolean>;
  /** Records the succeeded payment once by its key (an existing row gains the ids it lacked); true when this inserted it. */
  recordSucceeded(of: PaymentOf, p: Paid, now: Date): Promise<boolean>;
  /** Records a failed payment unless its key has a payment; true when recorded. */
  recordFailed(of: PaymentOf, f: Failed, now: Date): Promise<boolean>;
  /**
   * The member's trial in the project starts (docs/payments.md, "Trials"): their reservation
   * becomes `started` (or one is recorded); false when a trial of theirs started already (this
   * trial's other event, or an earlier trial), which grants nothing.
   */
  startTrial(t: { projectId: string; userId: string; planId: string; trialDays: number; sessionId: string | null }, now: Date): Promise<boolean>;
  /** A session that expired unpaid gives back the trial it reserved; whether it held one. */
  releaseSessionTrial(projectId: string, sessionId: string): Promise<boolean>;
  /** Keeps the e-mail Checkout collected on the member's user row (setting collect_email_on_subscribe). */
  rememberEmail(projectId: string, userId: string, email: string): Promise<void>;
}

/** Refunds and disputes, found with their payment by payment intent (docs/payments.md, "Out of order"). */
export interface ReversalStatements {
  /** Serialises the events of one payment intent until the transaction ends. */
  lockPaymentIntent(projectId: string, paymentIntentId: string): Promise<void>;
  /** Marks the succeeded payment of the intent `status`; its member's user id, or null when none was succeeded. */
  markReversed(projectId: string, paymentIntentId: string, status: ReversalStatus, now: Date): Promise<string | null>;
  /** Whether a payment of the intent is recorded, in any status. */
  isRecorded(projectId: string, paymentIntentId: string): Promise<boolean>;
  /** Holds a reversal for its payment unless one is held already; whether this one was. */
  hold(held: { projectId: string; merchantAccountId: string; paymentIntentId: string; status: ReversalStatus; eventId: string; eventCreatedAt: Date }): Promise<boolean>;
  heldFor(projectId: string, paymentIntentId: string): Promise<ReversalStatus | null>;
  releaseHeld(projectId: string, paymentIntentId: string): Promise<void>;
}

/** What a grant changes: the member, the plan paid for, and the subscription (with its event's instant) if any. */
export interface Grant {
  projectId: string;
  userId: string;
  planId: string;
  subscriptionId: string | null;
  eventAt: Date;
}

/** The membership statements of payments, each write with its `membership.*` event. */
export interface PaidMembershipStatements {
  /** The member holding the subscription and their plan (null when it has none), or null. */
  holderOf(projectId: string, subscriptionId: string): Promise<{ userId: string; planId: string | null } | null>;
  /** Whether the plan's row is there. */
  planExists(projectId: string, planId: string): Promise<boolean>;
  /** Whether the member's membership of the subscription took one of `statuses` from an event later than `after`. */
  statusSetAfter(q: { projectId: string; userId: string; subscriptionId: string; statuses: readonly string[]; after: Date }): Promise<boolean>;
  /** Extends the member's membership by the plan's duration from its end (or from now), active; false when they have none. */
  extendByPlan(g: Grant, now: Date): Promise<boolean>;
  /** Creates the membership for the plan's duration unless the user is banned or has one. */
  createForPlan(g: Grant, now: Date): Promise<{ created: boolean; banned: boolean }>;
  /**
   * A trial's access: the member's membership of the plan active until `trialEnd` (kept if it ends
   * later), marked in trial (`trial_ends_at`), status `trialing`; created unless the user is banned.
   */
  grantTrial(g: Grant, trialEnd: Date, now: Date): Promise<'created' | 'extended' | 'banned'>;
  /**
   * Sets the subscription's status, and whether it ends with its period (null: unchanged), on its
   * memberships (or the named user's without one) unless a later event set them; their ids.
   */
  setSubscriptionStatus(
    s: { projectId: string; subscriptionId: string; userId: string | null; status: string; cancelAtPeriodEnd: boolean | null; eventAt: Date },
    now: Date,
  ): Promise<string[]>;
  /** Ends those of the memberships not ended already, now; whether one was. */
  endNow(ids: readonly string[], now: Date): Promise<boolean>;
  /** Ends the member's membership now unless it has ended; whether it was. */
  endMemberNow(projectId: string, userId: string, now: Date): Promise<boolean>;
  /** Keeps those of the memberships ending before `until` active until then; whether one was. */
  keepUntil(ids: readonly string[], until: Date, now: Date): Promise<boolean>;
}

/** The coupon uses a Checkout Session holds (docs/coupons.md, "Coupons at checkout"). */
export interface SessionCouponStatements {
  /** The session's reserved use becomes a redemption; the coupons' codes. */
  redeemSessionUse(projectId: string, sessionId: string, now: Date): Promise<string[]>;
  /** The session's reserved use goes back to its coupon; the coupons' codes. */
  releaseSessionUse(projectId: string, sessionId: string, now: Date): Promise<string[]>;
}

/** The stores an event's transaction uses. */
/** The confirmation a grant queues for its member (docs/front-desk.md, "Confirmations"): once per payment key. */
export interface ConfirmationStatements {
  queueConfirmation(g: { projectId: string; userId: string; planId: string; paymentKey: string }, now: Date): Promise<boolean>;
}

/** The guild join a grant queues for a member who logged in with Discord on the web (docs/web.md, "After payment"). */
export interface GuildJoinStatements {
  queueAfterPayment(g: { projectId: string; userId: string; planId: string; paymentKey: string }, now: Date): Promise<boolean>;
}

export interface StripeEventStores {
  stripeEvents: StripeEventLog;
  notifications: ConfirmationStatements;
  guildJoins: GuildJoinStatements;
  payments: PaymentStatements;
  paymentReversals: ReversalStatements;
  paidMemberships: PaidMembershipStatements;
  coupons: SessionCouponStatements;
}
