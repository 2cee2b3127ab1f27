import { sql } from 'drizzle-orm';
import type { TenureEvent } from '../domain/events.js';
import { affectedOf, rowsOf, type Db } from '../database/db.js';
import { webhookBody } from './outbox.js';

/**
 * The outbox as live updates read it: claiming events for their one broadcast, replaying a
 * project's events to a resumed subscription, and the key checks of open connections. Events are
 * rendered as webhooks carry them (`webhookBody`, outbox.ts), so a socket gets exactly what a webhook gets.
 */

const eventJson = sql`${webhookBody('e')}::json`;

/** Where a resumed subscription starts: the event the client saw last. */
export interface ResumePoint {
  seq: number;
  /** False when the event is older than the retention: what followed it may be gone. */
  retained: boolean;
}

/**
 * On PostgreSQL an event can carry a smaller `seq` than the resume point (its transaction took it
 * earlier) yet commit, and be broadcast, after it. The replay therefore also looks back this many
 * sequence numbers for events claimed no earlier than the resume point's claim, less a margin:
 * `event_broadcasts.broadcast_at` is stamped by the database's clock (one clock for every node) as
 * a claim takes the rows, and an event committed after one claim took its rows is taken by a later
 * claim, so the margin only has to cover claims running side by side on several nodes (each
 * lasting one emit). Events of the project claimed within that margin before the resume point come
 * again: duplicates, which `event_id` dedupes, rather than a gap.
 *
 * An event without a mark was written while its project had no live audience (src/live/audiences.ts)
 * and is never a late commit: it commits before the audience begins (whose lock waits for it), or
 * its statement ended after the audience lapsed, ten minutes after its last refresh, so at least
 * nine after every connection of the project had closed: a statement that took its `seq` before the
 * resume point was sent and ended nine minutes later. No statement of tenure runs that long.
 */
const LATE_COMMIT_SEQS = 10_000;
const LATE_COMMIT_MARGIN = '1 second';

/** Marks up to `limit` unbroadcast events broadcast; returns their seq, and their body when `render`. */
const claimStatement = (limit: number, render: boolean) => sql`
  WITH claimed AS (
    UPDATE event_broadcasts b SET broadcast_at = clock_timestamp()
    -- ARRAY(…): the locking subquery runs once, so the LIMIT holds.
    WHERE b.seq = ANY(ARRAY(
      SELECT seq FROM event_broadcasts
      WHERE broadcast_at IS NULL
      ORDER BY seq LIMIT ${limit}
      FOR NO KEY UPDATE SKIP LOCKED))
    RETURNING b.seq
  )
  ${render ? sql`SELECT e.seq, ${eventJson} AS event FROM claimed c JOIN events e ON e.seq = c.seq` : sql`SELECT seq FROM claimed`}`;

export class LiveEventsStore {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `limit` events no node has broadcast, oldest first, marks them broadcast (their
   * narrow `event_broadcasts` rows, never the event itself: migration 0018), hands them to `emit`
   * (in `seq` order) and only then commits. Rows another node is claiming are skipped (SKIP
   * LOCKED), so each event is broadcast by one node; emitting before the commit makes a crash cost
   * a repeat, never a loss. Returns how many were claimed.
   *
   * `audience` says whether an emit could reach anyone (false: no socket in this process and no
   * adapter to other nodes). While it is false the events are only marked, by one statement of
   * its own: not rendered (`tenure_webhook_body`), not emitted, no transaction around it. Every
   * write wakes the broadcaster, and with nobody listening the rendering was most of the claim's
   * cost, and on embedded storage each statement of the transaction a turn on its one connection.
   * A socket that subscribes while such a claim runs is owed none of its events: they were
   * committed before the claim began, so before it subscribed.
   */
  async claim(limit: number, emit: (events: TenureEvent[]) => void, audience: () => boolean = () => true): Promise<number> {
    if (!audience()) return rowsOf(await this.db.execute(claimStatement(limit, false))).length;
    return this.db.transaction(async (tx) => {
      const rows = rowsOf<{ seq: number | string; event: TenureEvent }>(await tx.execute(claimStatement(limit, true)));
      if (rows.length > 0) emit(rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((r) => r.event));
      return rows.length;
    });
  }

  /** The resume point `eventId` names in the project, or null when the project has no such event. */
  async resumePoint(projectId: string, eventId: string, retentionMs: number): Promise<ResumePoint | null> {
    const result = await this.db.execute(sql`
      SELECT seq, emitted_at >= now() - make_interval(secs => ${retentionMs / 1000}) AS retained
      FROM events WHERE id = ${eventId} AND project_id = ${projectId}`);
    const row = rowsOf<{ seq: number | string; retained: boolean }>(result)[0];
    // node-postgres returns bigint as a string; sequence numbers stay far below 2^53.
    return row ? { seq: Number(row.seq), retained: row.retained } : null;
  }

  /**
   * One page of the events a subscription resumed after `after` missed: the project's events of
   * `types` after it (and late commits, see LATE_COMMIT_SEQS), within the retention, by seq from
   * `cursor` (exclusive; start at `after.seq - LATE_COMMIT_SEQS`).
   */
  async replayPage(
    projectId: string,
    types: readonly string[],
    after: { eventId: string; seq: number },
    cursor: number,
    limit: number,
    retentionMs: number,
  ): Promise<{ events: TenureEvent[]; cursor: number }> {
    const result = await this.db.execute(sql`
      WITH a AS (
        SELECT e.seq, b.broadcast_at FROM events e LEFT JOIN event_broadcasts b ON b.seq = e.seq WHERE e.id = ${after.eventId}
      )
      SELECT e.seq, ${eventJson} AS event FROM events e CROSS JOIN a LEFT JOIN event_broadcasts b ON b.seq = e.seq
      WHERE e.project_id = ${projectId} AND e.seq > ${cursor} AND e.seq <> a.seq
        AND e.type = ANY(${sql.param([...types])}::text[])
        AND e.emitted_at >= now() - make_interval(secs => ${retentionMs / 1000})
        AND (e.seq > a.seq OR (b.seq IS NOT NULL AND b.broadcast_at IS NULL)
             OR b.broadcast_at >= coalesce(a.broadcast_at, clock_timestamp()) - ${LATE_COMMIT_MARGIN}::interval)
      ORDER BY e.seq LIMIT ${limit}`);
    const rows = rowsOf<{ seq: number | string; event: TenureEvent }>(result);
    return { events: rows.map((r) => r.event), cursor: rows.length ? Number(rows[rows.length - 1]!.seq) : cursor };
  }

  /** Of these API key ids, the ones revoked or gone. */
  async unusableKeys(keyIds: readonly string[]): Promise<string[]> {
    if (keyIds.length === 0) return [];
    const result = await this.db.execute(sql`
      SELECT k.id::text AS id FROM unnest(${sql.param([...keyIds])}::uuid[]) AS k(id)
      WHERE NOT EXISTS (SELECT 1 FROM api_keys a WHERE a.id = k.id AND a.revoked_at IS NULL)`);
    return rowsOf<{ id: string }>(result).map((r) => r.id);
  }

  /**
   * Makes `projectId` a live audience until `forMs` from now (src/live/audiences.ts): from the
   * moment this returns, every event of the project committed gets its broadcast mark. A project
   * that still is one only has its `live_until` moved on. Otherwise the row is changed under a FOR
   * UPDATE lock, which waits for every transaction writing the project's events (they hold it FOR
   * KEY SHARE: drizzle/functions.sql, tenure_events_inserted) and makes later ones wait until it
   * commits; they then read the changed row and mark. False when the project does not exist.
   */
  async holdAudience(projectId: string, forMs: number): Promise<boolean> {
    if ((await this.refreshAudiences([projectId], forMs)).length === 1) return true;
    const result = await this.db.execute(sql`
      WITH held AS (SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE)
      UPDATE projects p SET live_until = now() + make_interval(secs => ${forMs / 1000})
      FROM held WHERE p.id = held.id
      RETURNING p.id`);
    return rowsOf(result).length === 1;
  }

  /**
   * Moves on, to `forMs` from now, the `live_until` of these projects that are still live
   * audiences; returns those. One that lapsed meanwhile needs holdAudience (and its lock) again.
   */
  async refreshAudiences(projectIds: readonly string[], forMs: number): Promise<string[]> {
    if (projectIds.length === 0) return [];
    const result = await this.db.execute(sql`
      UPDATE projects SET live_until = now() + make_interval(secs => ${forMs / 1000})
      WHERE id = ANY(${sql.param([...projectIds])}::uuid[]) AND live_until > now()
      RETURNING id::text AS id`);
    return rowsOf<{ id: string }>(result).map((r) => r.id);
  }

  /**
   * Deletes broadcast live-only events (the webhook-deliveries channel's) older than the
   * retention, a batch at a time; an event without a mark had nobody to be broadcast to. Only
   * those: other events feed webhook deliveries and their history, which deleting an event would
   * take with it.
   */
  async pruneLiveOnly(retentionMs: number, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      DELETE FROM events WHERE id IN (
        SELECT id FROM events
        WHERE live_only AND emitted_at < now() - make_interval(secs => ${retentionMs / 1000})
          AND NOT EXISTS (SELECT 1 FROM event_broadcasts b WHERE b.seq = events.seq AND b.broadcast_at IS NULL)
        LIMIT ${batch})`);
    return affectedOf(result);
  }
}

export const replayStart = (seq: number): number => seq - LATE_COMMIT_SEQS;
