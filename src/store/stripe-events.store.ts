import { sql } from 'drizzle-orm';
import type { EventMeta, StripeEventLog } from '../domain/payments/payment-statements.js';
import type { Db } from '../database/db.js';
import { rowsOf } from '../database/db.js';
import { at } from '../database/sql.js';

/**
 * `payment_events`: each provider event of a merchant account recorded once (docs/payments.md,
 * "What each Stripe event does"), with what applying it did. StripeEventsService records the id
 * first in the event's transaction: the unique key makes a concurrent delivery of the same event
 * wait for it and then find it there, a duplicate.
 */
export class StripeEventsStore implements StripeEventLog {
  constructor(private readonly db: Db) {}

  async recordOnce(meta: EventMeta): Promise<boolean> {
    const fresh = rowsOf(
      await this.db.execute(sql`
        INSERT INTO payment_events (merchant_account_id, event_id, type, created_at, source, outcome)
        VALUES (${meta.merchantAccountId}, ${meta.eventId}, ${meta.type}, ${at(meta.createdAt)}, ${meta.source}, 'applying')
        ON CONFLICT (merchant_account_id, event_id) DO NOTHING RETURNING event_id`),
    );
    return fresh.length > 0;
  }

  async setOutcome(meta: EventMeta, outcome: string): Promise<void> {
    await this.db.execute(sql`UPDATE payment_events SET outcome = ${outcome} WHERE merchant_account_id = ${meta.merchantAccountId} AND event_id = ${meta.eventId}`);
  }
}
