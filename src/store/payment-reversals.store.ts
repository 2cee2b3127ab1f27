import { sql } from 'drizzle-orm';
import type { ReversalStatus } from '../domain/payments/payment-rules.js';
import type { ReversalStatements } from '../domain/payments/payment-statements.js';
import type { Db } from '../database/db.js';
import { rowsOf } from '../database/db.js';
import { paymentEvent } from './payments.store.js';
import { at } from '../database/sql.js';

/**
 * Refunds and disputes (docs/payments.md, "What each Stripe event does", "Out of order"), run in
 * the transaction of the event that brings them (StripeEventsService): a reversal marks its
 * payment; one that comes before its payment is held in `held_reversals` until the payment is
 * recorded, which then is recorded reversed. Both sides find each other by payment intent, as
 * reversals name their payment.
 */

/**
 * An advisory lock class (the two-key form: its keys never meet the one-key locks of the planner
 * and of migrations) for one payment intent of a project.
 */
const PAYMENT_INTENT_LOCK = 734_622_103;

export class PaymentReversalsStore implements ReversalStatements {
  constructor(private readonly db: Db) {}

  /**
   * Serialises the events of one payment intent until the transaction ends: a reversal and its
   * payment applied at the same moment would otherwise each miss the other's uncommitted row (the
   * reversal no payment to mark, the payment no reversal held), and the payment would grant for
   * good. Under READ COMMITTED the statements after the lock see what the other one committed.
   */
  async lockPaymentIntent(projectId: string, paymentIntentId: string): Promise<void> {
    await this.db.execute(sql`SELECT pg_advisory_xact_lock(${PAYMENT_INTENT_LOCK}::int, hashtext(${`${projectId}:${paymentIntentId}`}))`);
  }

  /** Marks the succeeded payment of `paymentIntentId` `status`, its `payment.*` event with it; its member, or null when none was succeeded. */
  async markReversed(projectId: string, paymentIntentId: string, status: ReversalStatus, now: Date): Promise<string | null> {
    const type = status === 'refunded' ? 'payment.refunded' : 'payment.disputed';
    const marked = rowsOf<{ user_id: string }>(
      await this.db.execute(sql`
        WITH upd AS (
          UPDATE payments SET status = ${status}, updated_at = ${at(now)}
          WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId} AND status = 'succeeded'
          RETURNING *
        ), ev AS (${paymentEvent(type, 'upd')})
        SELECT user_id FROM upd`),
    );
    return marked[0]?.user_id ?? null;
  }

  /** Whether the project has a payment of `paymentIntentId` recorded, in any status. */
  async isRecorded(projectId: string, paymentIntentId: string): Promise<boolean> {
    const rows = await this.db.execute(sql`SELECT 1 FROM payments WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId} LIMIT 1`);
    return rowsOf(rows).length > 0;
  }

  /** Holds a reversal for its payment, unless one is held for it already (the first one held wins, as the first applied does in order); whether it was held. */
  async hold(held: { projectId: string; merchantAccountId: string; paymentIntentId: string; status: ReversalStatus; eventId: string; eventCreatedAt: Date }): Promise<boolean> {
    const rows = await this.db.execute(sql`
      INSERT INTO held_reversals (project_id, merchant_account_id, provider, payment_intent_id, status, event_id, event_created_at)
      VALUES (${held.projectId}, ${held.merchantAccountId}, 'stripe', ${held.paymentIntentId}, ${held.status}, ${held.eventId}, ${at(held.eventCreatedAt)})
      ON CONFLICT (project_id, provider, payment_intent_id) DO NOTHING
      RETURNING payment_intent_id`);
    return rowsOf(rows).length > 0;
  }

  /** The reversal held for `paymentIntentId`, if any. */
  async heldFor(projectId: string, paymentIntentId: string): Promise<ReversalStatus | null> {
    const rows = rowsOf<{ status: ReversalStatus }>(
      await this.db.execute(sql`SELECT status FROM held_reversals WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId}`),
    );
    return rows[0]?.status ?? null;
  }

  /** A held reversal applied to its payment is done with. */
  async releaseHeld(projectId: string, paymentIntentId: string): Promise<void> {
    await this.db.execute(sql`DELETE FROM held_reversals WHERE project_id = ${projectId} AND provider = 'stripe' AND payment_intent_id = ${paymentIntentId}`);
  }
}
