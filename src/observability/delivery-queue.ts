import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../store/db.js';

/**
 * The delivery queue as a scrape sees it. One read of the pending rows through the partial index
 * `webhook_deliveries_due_idx` (WHERE status = 'pending'), so its cost grows with the backlog,
 * not with the delivery history.
 */
export async function deliveryQueueStats(db: Db): Promise<{ depth: number; oldestDueAgeSeconds: number }> {
  const result = await db.execute(sql`
    SELECT count(*)::int AS depth,
           COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now())), 0)::float8 AS age
    FROM webhook_deliveries
    WHERE status = 'pending'`);
  const row = rowsOf<{ depth: number | string; age: number | string }>(result)[0];
  return { depth: Number(row?.depth ?? 0), oldestDueAgeSeconds: Math.max(0, Number(row?.age ?? 0)) };
}
