import { sql } from 'drizzle-orm';
import type { ReversalStatus } from '../domain/payments/payment-rules.js';
import type { Db } from './db.js';
import { rowsOf } from './db.js';
import { membershipEvent, withPlan } from './memberships.store.js';
import { paymentEvent } from './payments.store.js';

/**
 * Refunds and disputes (docs/payments.md, "What each Stripe event does", "Out of order"), run in
 * the transaction of the event that brings them (StripeEventsStore): a reversal marks its payment
 * and ends its member's membership now; one that comes before its payment is held in
 * `held_reversals` until the payment is recorded, which then is recorded reversed. Both sides find
 * each other by payment intent, as reversals name their payment.
 */

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * An advisory lock class (the two-key form: its keys never meet the one-key locks of the planner
 * and of migrations) for one payment intent of a project.
 */
const PAYMENT_INTENT_LOCK = 734_622_103;

/**
 * Serialises the events of one payment intent until the transaction ends: a reversal and its
 * payment applied at the same moment would otherwise each miss the other's uncommitted row (the
 * reversal no payment to mark, the payment no reversal held), and the payment would grant for
 * good. Under READ COMMITTED the statements after the lock see what the other one committed.
 */
export async function lockPaymentIntent(tx: Tx, projectId: string, paymentIntentId: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${PAYMENT_INTENT_LOCK}::int, hashtext(${`${projectId}:${paymentIntentId}`}))`);
}

/**
 * Marks the succeeded payment of `paymentIntentId` `status` (its `payment.*` event with it) and,
 * when one was marked, ends its member's membership now (`membership.expired`), whichever payment
 * of theirs it was.
 */
export async function reversePayment(tx: Tx, projectId: string, paymentIntentId: string, status: ReversalStatus, now: Date): Promise<{ marked: boolean; ended: boolean }> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const type = status === 'refunded' ? 'payment.refunded' : 'payment.disputed';
  const marked = rowsOf<{ user_id: string }>(
    await tx.execute(sql`
      WITH upd AS (
        UPDATE payments SET status = ${status}, updated_at = ${at}
        WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId} AND status = 'succeeded'
        RETURNING *
      ), ev AS (${paymentEvent(type, 'upd')})
      SELECT user_id FROM upd`),
  );
  if (marked.length === 0) return { marked: false, ended: false };
  const ended = rowsOf(
    await tx.execute(sql`
      WITH upd AS (
        UPDATE memberships m SET end_date = ${at}, status = 'expired', updated_at = ${at}
        WHERE m.project_id = ${projectId} AND m.user_id = ${marked[0]!.user_id} AND m.end_date > ${at}
        RETURNING m.*
      ), full_row AS (${withPlan('upd')}), ev AS (${membershipEvent('membership.expired', now)})
      SELECT id FROM full_row`),
  );
  return { marked: true, ended: ended.length > 0 };
}

/** Whether the project has a payment of `paymentIntentId` recorded, in any status. */
export async function paymentRecorded(tx: Tx, projectId: string, paymentIntentId: string): Promise<boolean> {
  const rows = await tx.execute(sql`SELECT 1 FROM payments WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId} LIMIT 1`);
  return rowsOf(rows).length > 0;
}

/** Holds a reversal for its payment, unless one is held for it already (the first one held wins, as the first applied does in order); whether it was held. */
export async function holdReversal(
  tx: Tx,
  held: { projectId: string; merchantAccountId: string; paymentIntentId: string; status: ReversalStatus; eventId: string; eventCreatedAt: Date },
): Promise<boolean> {
  const rows = await tx.execute(sql`
    INSERT INTO held_reversals (project_id, merchant_account_id, provider, payment_intent_id, status, event_id, event_created_at)
    VALUES (${held.projectId}, ${held.merchantAccountId}, 'stripe', ${held.paymentIntentId}, ${held.status}, ${held.eventId}, ${held.eventCreatedAt.toISOString()}::timestamptz)
    ON CONFLICT (project_id, provider, payment_intent_id) DO NOTHING
    RETURNING payment_intent_id`);
  return rowsOf(rows).length > 0;
}

/** The reversal held for `paymentIntentId`, if any. */
export async function heldReversalOf(tx: Tx, projectId: string, paymentIntentId: string): Promise<ReversalStatus | null> {
  const rows = rowsOf<{ status: ReversalStatus }>(
    await tx.execute(sql`SELECT status FROM held_reversals WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId}`),
  );
  return rows[0]?.status ?? null;
}

/** A held reversal applied to its payment is done with. */
export async function releaseHeldReversal(tx: Tx, projectId: string, paymentIntentId: string): Promise<void> {
  await tx.execute(sql`DELETE FROM held_reversals WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId}`);
}
