import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { markWrites } from '../database/wakeups.js';
import { iso } from '../database/sql.js';

/**
 * The webhook delivery log as the API shows it (each delivery with its attempts), and replays: a
 * replay is a new delivery of the same event, which the workers then claim like any other
 * (deliveries.store.ts).
 */

export interface AttemptView {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error_class: string | null;
  error_message: string | null;
  response_excerpt: string | null;
  outcome: string;
  next_attempt_at: string | null;
}

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  replay_of: string | null;
  attempts: AttemptView[];
}

const deliveryView = (where: SQL) => sql`
  SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts AS attempt_count,
         CASE WHEN d.status = 'pending' THEN ${iso(sql`d.next_attempt_at`)} END AS next_attempt_at,
         ${iso(sql`d.created_at`)} AS created_at, ${iso(sql`d.completed_at`)} AS completed_at, d.replay_of,
         coalesce((
           SELECT json_agg(json_build_object(
             'attempt', a.attempt, 'attempted_at', ${iso(sql`a.attempted_at`)}, 'status_code', a.status_code,
             'duration_ms', a.duration_ms, 'error_class', a.error_class, 'error_message', a.error_message,
             'response_excerpt', a.response_excerpt, 'outcome', a.outcome,
             'next_attempt_at', ${iso(sql`a.next_attempt_at`)}) ORDER BY a.attempt, a.attempted_at)
           FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
  WHERE ${where}`;

export class DeliveryLogStore {
  constructor(private readonly db: Db) {}

  /** A webhook's deliveries, newest first, each with its attempts. */
  async list(
    projectId: string,
    webhookId: string,
    filter: { status?: string; limit: number; offset: number },
  ): Promise<{ items: DeliveryView[]; total: number }> {
    const where = filter.status
      ? sql`d.project_id = ${projectId} AND d.webhook_id = ${webhookId} AND d.status = ${filter.status}`
      : sql`d.project_id = ${projectId} AND d.webhook_id = ${webhookId}`;
    const [page, count] = await Promise.all([
      this.db.execute(sql`${deliveryView(where)} ORDER BY d.created_at DESC, d.id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM webhook_deliveries d WHERE ${where}`),
    ]);
    return { items: rowsOf<DeliveryView>(page), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }

  async get(projectId: string, webhookId: string, deliveryId: string): Promise<DeliveryView | null> {
    const result = await this.db.execute(
      deliveryView(sql`d.project_id = ${projectId} AND d.webhook_id = ${webhookId} AND d.id = ${deliveryId}`),
    );
    return rowsOf<DeliveryView>(result)[0] ?? null;
  }

  /**
   * A new delivery of the same event (same body bytes, same event id) to the same webhook, due at
   * once, when the webhook is enabled; or the delivery of that event to that webhook still pending,
   * if there is one (a replay never queues a second). Null when there is no such delivery or
   * webhook enabled.
   */
  async replayOne(projectId: string, webhookId: string, deliveryId: string, now: Date): Promise<string | null> {
    return this.db.transaction(async (tx) => {
      if (!(await lockEnabledHook(tx, projectId, webhookId))) return null;
      const result = await tx.execute(markWrites(sql`
        WITH src AS (
          -- The event held while its delivery is written (no foreign key does it: drizzle/functions.sql).
          SELECT d.id, d.project_id, d.webhook_id, d.event_id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.project_id = ${projectId} AND d.webhook_id = ${webhookId} AND d.id = ${deliveryId}
          FOR KEY SHARE OF e
        ), pending AS (
          SELECT p.id FROM webhook_deliveries p JOIN src ON p.webhook_id = src.webhook_id AND p.event_id = src.event_id
          WHERE p.status = 'pending' LIMIT 1
        ), ins AS (
          INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at, replay_of, created_at, updated_at)
          SELECT src.project_id, src.webhook_id, src.event_id, ${now}::timestamptz, src.id, ${now}::timestamptz, ${now}::timestamptz
          FROM src WHERE NOT EXISTS (SELECT 1 FROM pending)
          RETURNING id
        )
        SELECT id FROM ins UNION ALL SELECT id FROM pending`, ['deliveries']));
      return rowsOf<{ id: string }>(result)[0]?.id ?? null;
    });
  }

  /**
   * New deliveries to one enabled webhook of every event of its project emitted in
   * [since, until), except `webhook.test` events aimed at other webhooks, live-only events (the
   * webhook-deliveries channel's, which never go to webhooks) and events whose delivery to this
   * webhook is still pending (a replay never queues a second). At most `max` events: a range
   * holding more replays nothing and says where to stop (`over`: the emitted_at of the event past
   * the limit, so [since, over) holds at most `max`). Their bodies are rendered from the events
   * when the deliveries are claimed, as the fan-out's are. Null when the webhook is not there or
   * not enabled.
   */
  async replayRange(
    projectId: string,
    webhookId: string,
    range: { since: Date; until: Date; max: number },
    now: Date,
  ): Promise<{ replayed: number } | { over: string } | null> {
    return this.db.transaction(async (tx) => {
      if (!(await lockEnabledHook(tx, projectId, webhookId))) return null;
      const inRange = sql`e.project_id = ${projectId} AND e.emitted_at >= ${range.since}::timestamptz AND e.emitted_at < ${range.until}::timestamptz
          AND (e.target_webhook_id IS NULL OR e.target_webhook_id = ${webhookId}) AND NOT e.live_only`;
      const past = rowsOf<{ over: string }>(
        await tx.execute(sql`
          SELECT ${iso(sql`e.emitted_at`)} AS over FROM events e WHERE ${inRange}
          ORDER BY e.emitted_at, e.seq OFFSET ${range.max} LIMIT 1`),
      )[0];
      if (past) return { over: past.over };
      const result = await tx.execute(markWrites(sql`
        WITH ev AS (
          SELECT e.id FROM events e
          WHERE ${inRange}
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.event_id = e.id AND p.webhook_id = ${webhookId} AND p.status = 'pending')
          -- Held while their deliveries are written (no foreign key does it: drizzle/functions.sql).
          FOR KEY SHARE OF e
        ), ins AS (
          INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at, created_at, updated_at)
          SELECT ${projectId}, ${webhookId}, ev.id, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz FROM ev
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM ins)::int AS n`, ['deliveries']));
      return { replayed: rowsOf<{ n: number }>(result)[0]!.n };
    });
  }
}

/**
 * Locks an enabled webhook against other replays of it until the transaction ends (FOR NO KEY
 * UPDATE: the fan-out's deliveries, which take FOR KEY SHARE through their foreign key, are not
 * held up), so two replays cannot both see no pending delivery of an event and both queue one.
 * Taken in a statement of its own: the replay's statement then reads after the lock's holder has
 * committed. False when the webhook is not there or not enabled.
 */
async function lockEnabledHook(tx: Pick<Db, 'execute'>, projectId: string, webhookId: string): Promise<boolean> {
  const hook = await tx.execute(sql`SELECT id FROM webhooks WHERE id = ${webhookId} AND project_id = ${projectId} AND enabled FOR NO KEY UPDATE`);
  return rowsOf(hook).length > 0;
}
