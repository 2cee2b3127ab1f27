import { sql } from 'drizzle-orm';
import { ENDING_STATUSES, arrivalAction, buyerIn, grantRefusal, outcomeSentence, payerOf, reversalAction, statusAction, type Outcome, type ReversalStatus } from '../domain/payments/payment-rules.js';
import type { Buyer, PaymentChange } from '../domain/payments/stripe-events.js';
import type { Clock } from '../domain/clock.js';
import type { Db } from './db.js';
import { rowsOf } from './db.js';
import { redeemSessionUse, releaseSessionUse } from './coupons.store.js';
import { extendedEvent, membershipEvent, withPlan } from './memberships.store.js';
import { insertEvent } from './outbox.js';
import { heldReversalOf, holdReversal, lockPaymentIntent, paymentRecorded, releaseHeldReversal, reversePayment } from './payment-reversals.js';
import { paymentEvent, paymentJson } from './payments.store.js';

/**
 * A provider's events applied to payments and memberships (docs/payments.md, "What each Stripe
 * event does"). Each event is applied in one transaction that first records its id in
 * `payment_events`: an id already there is a duplicate and changes nothing, whichever way it came
 * (the webhook, a redelivery, reconciliation). Every change writes its outbox events in the same
 * transaction: `payment.*` and the `membership.*` the access engine follows. What to do, and the
 * outcome in words, are the domain's (domain/payments/payment-rules.ts): this store runs the reads
 * and the guarded writes, and reports what they found.
 */

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface EventMeta {
  merchantAccountId: string;
  projectId: string;
  eventId: string;
  type: string;
  /** When the provider created the event: orders subscription statuses. */
  createdAt: Date;
  source: 'webhook' | 'reconcile';
}

export class StripeEventsStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Applies `change` for the event `meta` once: null when the event was applied before (nothing
   * changes), else what applying it did, in words (kept in `payment_events.outcome`).
   */
  async apply(meta: EventMeta, change: PaymentChange, o: { graceMs: number }): Promise<string | null> {
    return this.db.transaction(async (tx) => {
      const fresh = rowsOf(
        await tx.execute(sql`
          INSERT INTO payment_events (merchant_account_id, event_id, type, created_at, source, outcome)
          VALUES (${meta.merchantAccountId}, ${meta.eventId}, ${meta.type}, ${meta.createdAt.toISOString()}::timestamptz, ${meta.source}, 'applying')
          ON CONFLICT (merchant_account_id, event_id) DO NOTHING RETURNING event_id`),
      );
      if (fresh.length === 0) return null;
      const outcome = outcomeSentence(await this.applyChange(tx, meta, change, o.graceMs));
      await tx.execute(sql`UPDATE payment_events SET outcome = ${outcome} WHERE merchant_account_id = ${meta.merchantAccountId} AND event_id = ${meta.eventId}`);
      return outcome;
    });
  }

  private async applyChange(tx: Tx, meta: EventMeta, change: PaymentChange, graceMs: number): Promise<Outcome> {
    switch (change.kind) {
      case 'ignored':
        return change;
      case 'paid':
        return this.paid(tx, meta, change);
      case 'failed':
        return this.failed(tx, meta, change);
      case 'subscription':
        return this.subscription(tx, meta, change, graceMs);
      case 'reversed':
        return this.reversed(tx, meta, change);
      case 'expired': {
        // docs/payments.md, "Coupons at checkout": a session that expired unpaid gives its coupon's use back.
        return { kind: 'session-expired', releasedCodes: await releaseSessionUse(tx, meta.projectId, change.sessionId, this.clock.now()) };
      }
    }
  }

  /** Who paid (payerOf): the buyer named by the event, or the member holding the subscription, looked up. */
  private async buyerOf(tx: Tx, projectId: string, buyer: Buyer | null, subscriptionId: string | null): Promise<Buyer | null> {
    const payer = payerOf(projectId, buyer, subscriptionId);
    if (!payer) return null;
    if ('buyer' in payer) return payer.buyer;
    const rows = rowsOf<{ user_id: string; plan_id: string | null }>(
      await tx.execute(sql`SELECT user_id, plan_id FROM memberships WHERE project_id = ${projectId} AND subscription_id = ${payer.holderOf}`),
    );
    const row = rows[0];
    return row?.plan_id ? { projectId, planId: row.plan_id, userId: row.user_id } : null;
  }

  private async paid(tx: Tx, meta: EventMeta, p: Extract<PaymentChange, { kind: 'paid' }>): Promise<Outcome> {
    const buyer = await this.buyerOf(tx, meta.projectId, p.buyer, p.subscriptionId);
    if (!buyer) return { kind: 'no-member' };
    const now = this.clock.now();
    // A reversal may have come first and be held for this payment (docs/payments.md, "Out of
    // order"); the lock makes one of a payment and its reversal applied at once see the other.
    // A subscription's session carries no payment intent: its invoice.paid brings it.
    const pi = p.paymentIntentId;
    if (pi) await lockPaymentIntent(tx, meta.projectId, pi);
    const held = pi ? await heldReversalOf(tx, meta.projectId, pi) : null;
    // A renewal that failed and is paid later (Stripe retries the same invoice): its failed row
    // becomes the payment. The status guard lets one event do it when two race.
    const retried = rowsOf<{ n: number }>(
      await tx.execute(sql`
        WITH upd AS (
          UPDATE payments AS p SET status = 'succeeded', amount_minor = ${p.amountMinor}, updated_at = ${now.toISOString()}::timestamptz,
            checkout_session_id = coalesce(p.checkout_session_id, ${p.checkoutSessionId}),
            payment_intent_id = coalesce(p.payment_intent_id, ${p.paymentIntentId}),
            customer_id = coalesce(p.customer_id, ${p.customerId})
          WHERE p.project_id = ${meta.projectId}::uuid AND p.provider = 'stripe' AND p.payment_key = ${p.key} AND p.status = 'failed'
          RETURNING p.*
        ), ev AS (${paymentEvent('payment.succeeded', 'upd')})
        SELECT count(*)::int AS n FROM upd`),
    );
    if ((retried[0]?.n ?? 0) > 0) return this.arrived(tx, meta, buyer, p, held);
    // One row per payment: a subscription's first invoice comes as checkout.session.completed and as invoice.paid.
    const recorded = rowsOf<{ inserted: boolean }>(
      await tx.execute(sql`
        WITH ins AS (
          INSERT INTO payments AS p (project_id, merchant_account_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status,
            checkout_session_id, payment_intent_id, invoice_id, subscription_id, customer_id, created_at, updated_at)
          SELECT ${meta.projectId}::uuid, ${meta.merchantAccountId}::uuid, 'stripe', ${p.key}, ${buyer.userId},
            (SELECT id FROM plans WHERE id = ${buyer.planId}::uuid AND project_id = ${meta.projectId}::uuid), ${p.amountMinor}, ${p.currency}, 'succeeded',
            ${p.checkoutSessionId}, ${p.paymentIntentId}, ${p.invoiceId}, ${p.subscriptionId}, ${p.customerId}, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
          ON CONFLICT (project_id, provider, payment_key) DO UPDATE SET
            checkout_session_id = coalesce(p.checkout_session_id, excluded.checkout_session_id),
            payment_intent_id = coalesce(p.payment_intent_id, excluded.payment_intent_id),
            customer_id = coalesce(p.customer_id, excluded.customer_id)
          RETURNING p.*, (xmax = 0) AS inserted
        ), ev AS (${insertEvent('payment.succeeded', { projectId: sql`project_id`, data: { payment: paymentJson('ins') }, from: sql`FROM ins WHERE inserted` })})
        SELECT inserted FROM ins`),
    );
    // The session's coupon use (reserved at checkout) is now a redemption, whichever event recorded the payment.
    if (p.checkoutSessionId) await redeemSessionUse(tx, meta.projectId, p.checkoutSessionId, now);
    if (recorded[0]?.inserted) return this.arrived(tx, meta, buyer, p, held);
    // Recorded (and granted) by the session's event, which had no payment intent to meet the
    // held reversal with: this event brought it, and the reversal applies as if it came now.
    if (held && pi) {
      const reversal = await reversePayment(tx, meta.projectId, pi, held, now);
      if (reversal.marked) {
        await releaseHeldReversal(tx, meta.projectId, pi);
        return { kind: 'reversed', paymentIntentId: pi, status: held, ...reversal };
      }
    }
    return { kind: 'paid-already' };
  }

  /**
   * A payment just recorded succeeded (its `payment.succeeded` written): it grants, or, when a
   * reversal was held for it, it is reversed at once and grants nothing (arrivalAction).
   */
  private async arrived(tx: Tx, meta: EventMeta, buyer: Buyer, p: Extract<PaymentChange, { kind: 'paid' }>, held: ReversalStatus | null): Promise<Outcome> {
    const action = arrivalAction(held);
    if (action.kind === 'grant' || !p.paymentIntentId) return this.grant(tx, meta, buyer, p.subscriptionId);
    const reversal = await reversePayment(tx, meta.projectId, p.paymentIntentId, action.status, this.clock.now());
    await releaseHeldReversal(tx, meta.projectId, p.paymentIntentId);
    return { kind: 'arrived-reversed', status: action.status, ended: reversal.ended };
  }

  /**
   * Unless the domain refuses the grant (grantRefusal), extends the member's membership by the
   * plan's duration from its end date (or from now, when it has ended), else creates it, with its
   * event; a subscription's id and status go with it.
   */
  private async grant(tx: Tx, meta: EventMeta, buyer: Buyer, subscriptionId: string | null): Promise<Outcome> {
    const now = this.clock.now();
    const at = sql`${now.toISOString()}::timestamptz`;
    const eventAt = sql`${meta.createdAt.toISOString()}::timestamptz`;
    const plan = rowsOf<{ id: string }>(await tx.execute(sql`SELECT id FROM plans WHERE id = ${buyer.planId} AND project_id = ${meta.projectId}`));
    const planExists = plan.length > 0;
    // Looked up only when the plan exists: without it the grant is refused whatever this finds.
    const endedAfterPayment =
      planExists &&
      rowsOf(
        await tx.execute(sql`
          SELECT 1 FROM memberships WHERE project_id = ${meta.projectId} AND user_id = ${buyer.userId} AND subscription_id = ${subscriptionId}
            AND subscription_status IN (${sql.join(ENDING_STATUSES.map((s) => sql`${s}`), sql`, `)}) AND subscription_status_at > ${eventAt}`),
      ).length > 0;
    const refusal = grantRefusal({ planExists, endedAfterPayment });
    if (refusal) return { kind: 'not-granted', why: refusal };
    const status = subscriptionId ? sql`'active'` : sql`NULL`;
    const extended = rowsOf(
      await tx.execute(sql`
        WITH old AS (
          SELECT id, end_date FROM memberships WHERE project_id = ${meta.projectId} AND user_id = ${buyer.userId} FOR UPDATE
        ), upd AS (
          UPDATE memberships m SET end_date = greatest(m.end_date, ${at}) + (SELECT duration FROM plans WHERE id = ${buyer.planId})::interval,
            status = 'active', plan_id = ${buyer.planId}, updated_at = ${at},
            subscription_id = coalesce(${subscriptionId}, m.subscription_id),
            subscription_status = CASE WHEN ${subscriptionId}::text IS NOT NULL AND (m.subscription_status_at IS NULL OR m.subscription_status_at <= ${eventAt})
              THEN ${status} ELSE m.subscription_status END,
            subscription_status_at = CASE WHEN ${subscriptionId}::text IS NOT NULL THEN greatest(m.subscription_status_at, ${eventAt}) ELSE m.subscription_status_at END
          FROM old WHERE m.id = old.id
          RETURNING m.*, old.end_date AS previous_end_date
        ), full_row AS (${withPlan('upd')}), ev AS (${extendedEvent(now)})
        SELECT id FROM full_row`),
    );
    if (extended.length > 0) return { kind: 'extended' };
    const created = rowsOf<{ banned: boolean; id: string | null }>(
      await tx.execute(sql`
        WITH banned AS (
          SELECT EXISTS (SELECT 1 FROM bans WHERE project_id = ${meta.projectId} AND user_id = ${buyer.userId}) AS yes
        ), ins AS (
          INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date, subscription_id, subscription_status, subscription_status_at, created_at, updated_at)
          SELECT ${meta.projectId}::uuid, ${buyer.userId}::text, ${buyer.planId}::uuid, ${at}, ${at} + (SELECT duration FROM plans WHERE id = ${buyer.planId})::interval,
            ${subscriptionId}::text, ${status}, CASE WHEN ${subscriptionId}::text IS NOT NULL THEN ${eventAt} END, ${at}, ${at}
          FROM banned WHERE NOT banned.yes
          ON CONFLICT (project_id, user_id) DO NOTHING
          RETURNING *
        ), usr AS (
          INSERT INTO users (project_id, user_id) SELECT project_id, user_id FROM ins
          ON CONFLICT (project_id, user_id) DO UPDATE SET last_seen = now()
          RETURNING project_id, user_id, first_name, username
        ), full_row AS (${withPlan('ins', 'usr')}), ev AS (${membershipEvent('membership.created', now)})
        SELECT (SELECT yes FROM banned) AS banned, (SELECT id FROM full_row) AS id`),
    )[0]!;
    return { kind: 'create', created: Boolean(created.id), banned: created.banned };
  }

  private async failed(tx: Tx, meta: EventMeta, f: Extract<PaymentChange, { kind: 'failed' }>): Promise<Outcome> {
    const buyer = await this.buyerOf(tx, meta.projectId, f.buyer, f.subscriptionId);
    if (!buyer) return { kind: 'no-member' };
    const now = sql`${this.clock.now().toISOString()}::timestamptz`;
    const rows = rowsOf(
      await tx.execute(sql`
        WITH ins AS (
          INSERT INTO payments (project_id, merchant_account_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status,
            invoice_id, subscription_id, customer_id, created_at, updated_at)
          SELECT ${meta.projectId}::uuid, ${meta.merchantAccountId}::uuid, 'stripe', ${f.key}, ${buyer.userId},
            (SELECT id FROM plans WHERE id = ${buyer.planId}::uuid AND project_id = ${meta.projectId}::uuid), ${f.amountMinor}, ${f.currency}, 'failed',
            ${f.invoiceId}, ${f.subscriptionId}, ${f.customerId}, ${now}, ${now}
          ON CONFLICT (project_id, provider, payment_key) DO NOTHING
          RETURNING *
        ), ev AS (${paymentEvent('payment.failed', 'ins')})
        SELECT id FROM ins`),
    );
    return { kind: 'failed', recorded: rows.length > 0 };
  }

  /**
   * Records the subscription's status unless a later event set it already, and runs what the
   * domain says it does (statusAction): end the memberships now, or keep access until a date.
   */
  private async subscription(tx: Tx, meta: EventMeta, s: Extract<PaymentChange, { kind: 'subscription' }>, graceMs: number): Promise<Outcome> {
    const now = this.clock.now();
    const at = sql`${now.toISOString()}::timestamptz`;
    const eventAt = sql`${meta.createdAt.toISOString()}::timestamptz`;
    const user = buyerIn(meta.projectId, s.buyer)?.userId ?? null;
    const marked = rowsOf<{ id: string; end_date_passed: boolean }>(
      await tx.execute(sql`
        UPDATE memberships SET subscription_id = ${s.subscriptionId}, subscription_status = ${s.status}, subscription_status_at = ${eventAt}, updated_at = ${at}
        WHERE project_id = ${meta.projectId}
          AND (subscription_id = ${s.subscriptionId} OR (subscription_id IS NULL AND user_id = ${user}::text))
          AND (subscription_status_at IS NULL OR subscription_status_at <= ${eventAt})
        RETURNING id, end_date <= ${at} AS end_date_passed`),
    );
    if (marked.length === 0) return { kind: 'status-not-set', subscriptionId: s.subscriptionId };
    const ids = sql.join(marked.map((m) => sql`${m.id}::uuid`), sql`, `);
    const action = statusAction(s.status, now, graceMs);
    if (action.kind === 'end') {
      const ended = rowsOf(
        await tx.execute(sql`
          WITH upd AS (
            UPDATE memberships m SET end_date = ${at}, status = 'expired', updated_at = ${at}
            WHERE m.id IN (${ids}) AND m.end_date > ${at}
            RETURNING m.*
          ), full_row AS (${withPlan('upd')}), ev AS (${membershipEvent('membership.expired', now)})
          SELECT id FROM full_row`),
      );
      return { kind: 'status-set', status: s.status, action: action.kind, changed: ended.length > 0 };
    }
    if (action.kind === 'keep') {
      const until = sql`${action.until.toISOString()}::timestamptz`;
      const kept = rowsOf(
        await tx.execute(sql`
          WITH old AS (SELECT id, end_date FROM memberships WHERE id IN (${ids}) AND end_date < ${until} FOR UPDATE
          ), upd AS (
            UPDATE memberships m SET end_date = ${until}, status = 'active', updated_at = ${at}
            FROM old WHERE m.id = old.id
            RETURNING m.*, old.end_date AS previous_end_date
          ), full_row AS (${withPlan('upd')}), ev AS (${extendedEvent(now)})
          SELECT id FROM full_row`),
      );
      return { kind: 'status-set', status: s.status, action: action.kind, changed: kept.length > 0 };
    }
    return { kind: 'status-set', status: s.status, action: action.kind, changed: false };
  }

  /**
   * A refund or dispute: the payment is marked and its member's membership ends now; before the
   * payment is recorded, the reversal is held for it (reversalAction).
   */
  private async reversed(tx: Tx, meta: EventMeta, r: Extract<PaymentChange, { kind: 'reversed' }>): Promise<Outcome> {
    await lockPaymentIntent(tx, meta.projectId, r.paymentIntentId);
    const reversal = await reversePayment(tx, meta.projectId, r.paymentIntentId, r.status, this.clock.now());
    const recorded = reversal.marked || (await paymentRecorded(tx, meta.projectId, r.paymentIntentId));
    if (reversalAction({ marked: reversal.marked, recorded }) !== 'hold') return { kind: 'reversed', paymentIntentId: r.paymentIntentId, status: r.status, ...reversal };
    const { projectId, merchantAccountId, eventId, createdAt: eventCreatedAt } = meta;
    const held = await holdReversal(tx, { projectId, merchantAccountId, paymentIntentId: r.paymentIntentId, status: r.status, eventId, eventCreatedAt });
    return { kind: 'reversal-held', paymentIntentId: r.paymentIntentId, status: r.status, held };
  }
}
