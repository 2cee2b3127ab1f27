import { sql } from 'drizzle-orm';
import { pgArray, rowsOf, type Db } from '../database/db.js';
import { claimDue, type Claim, type ClaimOptions } from './delivery-claim.js';
import { eventRows, insertEvents, type EventData } from './outbox.js';
import { iso } from '../database/sql.js';

/**
 * Webhook deliveries and their attempts. Deliveries are created by the fan-out trigger on
 * `events` (drizzle/functions.sql) or by a replay here; workers claim due ones fairly across
 * endpoints and projects, with `FOR UPDATE SKIP LOCKED` and a lease (delivery-claim.ts), and record
 * each attempt fenced by that lease. The delivery log and replays, which the API reads and writes,
 * are in delivery-log.store.ts.
 */


export type { Claim, ClaimedDelivery, ClaimOptions } from './delivery-claim.js';

export interface AttemptRecord {
  id: string;
  attempt: number;
  attemptedAt: Date;
  completedAt: Date;
  durationMs: number;
  statusCode: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
  outcome: 'delivered' | 'retry' | 'dropped' | 'exhausted';
  nextAttemptAt: Date | null;
  /** A failure when the endpoint has failed since before this instant disables it. */
  disableIfFailingSince: Date;
}

/** The fields every outcome event shares, from `results r JOIN events e` in completeMany. */
const outcomeData = {
  webhook_id: sql<string>`r.webhook_id`,
  delivery_id: sql<string>`r.id`,
  event_id: sql<string>`r.event_id`,
  event_type: sql<string>`e.type`,
  attempt: sql<number>`r.attempt`,
  status_code: sql<number | null>`r.status_code`,
  duration_ms: sql<number>`r.duration_ms`,
} satisfies EventData<'webhook.delivery-succeeded'>;

export class DeliveriesStore {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `limit` due deliveries, fairly across endpoints and projects, and leases them to
   * `workerId` until `leaseUntil` (src/store/delivery-claim.ts).
   */
  claim(o: ClaimOptions): Promise<Claim> {
    return claimDue(this.db, o);
  }

  /**
   * Records finished attempts — one statement for a whole batch — and moves each delivery on,
   * only while `workerId` still holds the lease of that attempt (a worker whose lease ran out and
   * was taken over records nothing). Keeps each endpoint's failure streak: `failing_since` is the
   * first failed attempt after its last success; a failure when the streak began before that
   * attempt's `disableIfFailingSince` disables the endpoint. Returns the ids recorded and the
   * webhooks just disabled.
   */
  async completeMany(workerId: string, batch: readonly AttemptRecord[]): Promise<{ recorded: Set<string>; disabledWebhookIds: string[] }> {
    if (batch.length === 0) return { recorded: new Set(), disabledWebhookIds: [] };
    const col = <T>(pick: (a: AttemptRecord) => T) => sql.param(batch.map(pick));
    const failing = sql`CASE WHEN h.first_failure IS NULL THEN NULL
                             WHEN h.last_success IS NULL THEN coalesce(w.failing_since, h.first_failure)
                             ELSE h.first_failure END`;
    const disable = sql`(w.enabled AND h.disable_before IS NOT NULL AND ${failing} <= h.disable_before)`;
    const result = await this.db.execute(sql`
      WITH input AS (
        SELECT * FROM unnest(
          ${col((a) => a.id)}::uuid[], ${col((a) => a.attempt)}::int[], ${col((a) => a.attemptedAt.toISOString())}::timestamptz[],
          ${col((a) => a.completedAt.toISOString())}::timestamptz[], ${col((a) => a.durationMs)}::int[], ${col((a) => a.statusCode)}::int[],
          ${col((a) => a.errorClass)}::text[], ${col((a) => a.errorMessage)}::text[], ${col((a) => a.responseExcerpt)}::text[],
          ${col((a) => a.outcome)}::text[], ${col((a) => a.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
          ${col((a) => a.disableIfFailingSince.toISOString())}::timestamptz[]
        ) AS i(id, attempt, attempted_at, completed_at, duration_ms, status_code, error_class, error_message, excerpt, outcome, next_attempt_at, disable_before)
      ), upd AS (
        UPDATE webhook_deliveries d
        SET status = CASE i.outcome WHEN 'retry' THEN 'pending' WHEN 'delivered' THEN 'delivered' ELSE 'failed' END,
            next_attempt_at = coalesce(i.next_attempt_at, d.next_attempt_at), leased_by = NULL, updated_at = i.completed_at,
            completed_at = CASE WHEN i.outcome = 'retry' THEN NULL ELSE i.completed_at END
        FROM input i
        WHERE d.id = i.id AND d.leased_by = ${workerId} AND d.attempts = i.attempt AND d.status = 'pending'
        RETURNING d.id, d.webhook_id, d.project_id, d.event_id
      ), results AS (
        SELECT upd.webhook_id, upd.project_id, upd.event_id, i.* FROM upd JOIN input i ON i.id = upd.id
      ), att AS (
        INSERT INTO webhook_delivery_attempts
          (delivery_id, attempt, attempted_at, duration_ms, status_code, error_class, error_message, response_excerpt, outcome, next_attempt_at)
        SELECT id, attempt, attempted_at, duration_ms, status_code, error_class, error_message, excerpt, outcome, next_attempt_at FROM results
      ), successes AS (
        SELECT webhook_id, max(completed_at) AS last_success FROM results WHERE outcome = 'delivered' GROUP BY webhook_id
      ), h AS (
        SELECT r.webhook_id, s.last_success,
               min(r.attempted_at) FILTER (WHERE r.outcome <> 'delivered' AND (s.last_success IS NULL OR r.completed_at > s.last_success)) AS first_failure,
               max(r.disable_before) FILTER (WHERE r.outcome <> 'delivered' AND (s.last_success IS NULL OR r.completed_at > s.last_success)) AS disable_before,
               max(r.completed_at) AS last_completed
        FROM results r LEFT JOIN successes s ON s.webhook_id = r.webhook_id
        GROUP BY r.webhook_id, s.last_success
      ), hook AS (
        UPDATE webhooks w
        SET failing_since = ${failing},
            enabled = NOT (${disable}) AND w.enabled,
            disabled_at = CASE WHEN ${disable} THEN h.last_completed ELSE w.disabled_at END,
            disabled_reason = CASE WHEN ${disable} THEN 'failing' ELSE w.disabled_reason END,
            updated_at = CASE WHEN ${disable} THEN h.last_completed ELSE w.updated_at END
        FROM h
        WHERE w.id = h.webhook_id AND (w.failing_since IS DISTINCT FROM ${failing} OR ${disable})
        RETURNING w.id, w.enabled, w.project_id, w.disabled_at,
                  (NOT w.enabled AND w.disabled_reason = 'failing' AND w.disabled_at = h.last_completed) AS just_disabled
      ), live AS (
        -- The webhook-deliveries live channel: final outcomes and disabled endpoints, as
        -- live-only events (never fanned out to webhooks), committed with the outcome itself.
        ${insertEvents([
          eventRows('webhook.delivery-succeeded', {
            projectId: sql`r.project_id`,
            data: outcomeData,
            liveOnly: true,
            from: sql`FROM results r JOIN events e ON e.id = r.event_id WHERE r.outcome = 'delivered'`,
          }),
          eventRows('webhook.delivery-failed', {
            projectId: sql`r.project_id`,
            data: { ...outcomeData, reason: sql<'dropped' | 'exhausted'>`r.outcome`, error_class: sql<string | null>`r.error_class` },
            liveOnly: true,
            from: sql`FROM results r JOIN events e ON e.id = r.event_id WHERE r.outcome NOT IN ('delivered', 'retry')`,
          }),
          eventRows('webhook.endpoint-disabled', {
            projectId: sql`hook.project_id`,
            data: { webhook_id: sql<string>`hook.id`, reason: sql<'failing'>`'failing'`, disabled_at: iso(sql`hook.disabled_at`) },
            liveOnly: true,
            from: sql`FROM hook WHERE hook.just_disabled`,
          }),
        ])}
      )
      SELECT (SELECT coalesce(array_agg(id::text), '{}') FROM upd) AS recorded,
             (SELECT coalesce(array_agg(id::text), '{}') FROM hook WHERE NOT enabled) AS disabled`);
    const row = rowsOf<{ recorded: string[] | string; disabled: string[] | string }>(result)[0];
    return { recorded: new Set(pgArray(row?.recorded)), disabledWebhookIds: pgArray(row?.disabled) };
  }

  /** Gives back leases a stopping worker did not finish: due at once, with nothing recorded. */
  async release(ids: readonly string[], workerId: string, now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db.execute(sql`
      UPDATE webhook_deliveries SET leased_by = NULL, next_attempt_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
      WHERE id = ANY(${sql.param([...ids])}::uuid[]) AND leased_by = ${workerId} AND status = 'pending'`);
  }

  /**
   * When the next pending delivery falls due after `now` (null: none), leaving out the endpoints
   * and projects the worker may claim no more of, for the worker's sleep. Only the future: what
   * is due already was the claim's to find. A short read of the due index from `now` on, past
   * leases that run out later.
   */
  async nextDueAt(now: Date, except: { webhooks: readonly string[]; projects: readonly string[] }): Promise<Date | null> {
    const result = await this.db.execute(sql`
      SELECT ${iso(sql`min(next_attempt_at)`)} AS at FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at > ${now}::timestamptz
        AND webhook_id <> ALL(${sql.param([...except.webhooks])}::uuid[]) AND project_id <> ALL(${sql.param([...except.projects])}::uuid[])`);
    const at = rowsOf<{ at: string | null }>(result)[0]?.at;
    return at ? new Date(at) : null;
  }

  /**
   * When the first pending delivery falls due, due already or not (null: none is pending): the
   * first entry of the due index, one descent whatever the queue holds. The check of a worker with
   * nothing in flight when it is woken (src/webhooks/delivery.worker.ts): it claims only when this
   * is due.
   */
  async firstDueAt(): Promise<Date | null> {
    const result = await this.db.execute(sql`
      SELECT ${iso(sql`min(next_attempt_at)`)} AS at FROM webhook_deliveries WHERE status = 'pending'`);
    const at = rowsOf<{ at: string | null }>(result)[0]?.at;
    return at ? new Date(at) : null;
  }

  /** Marks a webhook's pending deliveries cancelled (it was disabled). */
  async cancelPending(webhookId: string, now: Date): Promise<number> {
    const result = await this.db.execute(sql`
      WITH c AS (
        UPDATE webhook_deliveries SET status = 'cancelled', leased_by = NULL, updated_at = ${now}::timestamptz, completed_at = ${now}::timestamptz
        WHERE webhook_id = ${webhookId} AND status = 'pending' RETURNING 1
      ) SELECT count(*)::int AS n FROM c`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /**
   * The queue as a metrics scrape sees it: pending deliveries and the age of the oldest one due.
   * One read through the partial index `webhook_deliveries_due_idx`, so its cost grows with the
   * backlog, not with the delivery history.
   */
  async queueStats(): Promise<{ depth: number; oldestDueAgeSeconds: number }> {
    const result = await this.db.execute(sql`
      SELECT count(*)::int AS depth,
             COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now())), 0)::float8 AS age
      FROM webhook_deliveries
      WHERE status = 'pending'`);
    const row = rowsOf<{ depth: number | string; age: number | string }>(result)[0];
    return { depth: Number(row?.depth ?? 0), oldestDueAgeSeconds: Math.max(0, Number(row?.age ?? 0)) };
  }
}
