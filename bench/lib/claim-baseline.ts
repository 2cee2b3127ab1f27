import { sql, type SQL } from 'drizzle-orm';
import type { ClaimOptions } from '../../src/store/delivery-claim.js';
import { webhookBody } from '../../src/store/outbox.js';

/**
 * The claim statement as it was before claims were fair across endpoints and projects (commit
 * d543b92, `DeliveriesStore.claim`), kept only as bench/fairness.ts's "before" side: one scan of
 * the due index in due order (past the deliveries of endpoints at their bound), at most
 * `perEndpoint` per webhook, no project bound. Copied verbatim but for the function around it
 * and the body, read as the claim reads it since stored bodies went (migration 0023);
 * the "after" side is the store's own claim (src/store/delivery-claim.ts), imported, never copied.
 */
export function baselineClaim(o: ClaimOptions): SQL {
  const busyIds = [...o.inFlight.keys()];
  const busyCounts = busyIds.map((id) => o.inFlight.get(id)!);
  const saturated = busyIds.filter((id) => o.inFlight.get(id)! >= o.perEndpoint);
  return sql`
      WITH busy AS (
        SELECT * FROM unnest(${sql.param(busyIds)}::uuid[], ${sql.param(busyCounts)}::int[]) AS b(webhook_id, n)
      ), scan AS (
        SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= ${o.now}::timestamptz
          AND d.webhook_id <> ALL(${sql.param(saturated)}::uuid[])
        ORDER BY d.next_attempt_at
        LIMIT ${o.limit * 4 + o.perEndpoint}
      ), ranked AS (
        SELECT s.id, s.webhook_id, s.next_attempt_at,
               row_number() OVER (PARTITION BY s.webhook_id ORDER BY s.next_attempt_at, s.id) AS rn
        FROM scan s
      ), picked AS (
        SELECT r.id FROM ranked r LEFT JOIN busy b ON b.webhook_id = r.webhook_id
        WHERE r.rn <= ${o.perEndpoint}::int - coalesce(b.n, 0)
        ORDER BY r.next_attempt_at LIMIT ${o.limit}
      ), locked AS (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.id IN (SELECT id FROM picked) AND d.status = 'pending' AND d.next_attempt_at <= ${o.now}::timestamptz
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, next_attempt_at = ${o.leaseUntil}::timestamptz, leased_by = ${o.workerId}, updated_at = ${o.now}::timestamptz
        FROM locked WHERE d.id = locked.id
        RETURNING d.id, d.webhook_id, d.event_id, d.attempts
      )
      SELECT c.id, c.webhook_id, c.event_id, c.attempts AS attempt, e.type AS event_type, ${webhookBody('e')} AS body, w.url, w.enabled,
             w.secret, CASE WHEN w.previous_secret_expires_at > ${o.now}::timestamptz THEN w.previous_secret END AS previous_secret
      FROM claimed c
      JOIN webhooks w ON w.id = c.webhook_id
      JOIN events e ON e.id = c.event_id`;
}
