import { sql } from 'drizzle-orm';
import type { AccessError, Desired } from './access-worker.store.js';
import { at, type IntegrationKey } from './bot-leases.store.js';
import { pgArray, rowsOf, type Db } from './db.js';
import { eventRows, insertEvents } from './outbox.js';

/**
 * The access worker's call outcomes (AccessWorkerStore.complete, access-worker.store.ts): what
 * one call's end means for its row, and the statement that records a batch of them with their
 * events, fenced by the bot's lease.
 */

/**
 * How one call ended, for `complete`:
 * - `applied`: the platform now holds `desired` (granted or revoked);
 * - `unchanged`: nothing to call (a revoke where `on_expiry` is `none`): synced, no event;
 * - `failed`: no retry until the target or the connection changes; with `targetFault` the target
 *   itself is at fault (50013, 10011, 10004…): it is flagged unhealthy and its other pending rows
 *   fail too, without a call;
 * - `waiting_for_member`: the member is not in the guild (10007);
 * - `retry`: a passing failure (network, timeout, 5xx), tried again at `nextAttemptAt`;
 * - `unauthorized`: the token was refused (401): the bot is flagged unhealthy, the row stays
 *   pending, due again once the bot is reconnected.
 */
export type AccessCompletion = {
  targetId: string;
  userId: string;
  /** The `desired` the call was made for (as claimed). */
  desired: Desired;
} & (
  | { outcome: 'applied' | 'unchanged' }
  | { outcome: 'failed'; error: AccessError; targetFault: boolean }
  | { outcome: 'waiting_for_member' | 'unauthorized'; error: AccessError }
  | { outcome: 'retry'; error: AccessError; nextAttemptAt: Date }
);

export interface CompleteResult {
  /** `target_id:user_id` of the rows the batch wrote (a row whose `desired` changed meanwhile included, when the call succeeded). */
  recorded: Set<string>;
  /** Other pending rows of faulted targets, failed without a call. */
  cascaded: number;
  /** Targets flagged unhealthy by this batch. */
  unhealthyTargets: string[];
  /** False when the lease was no longer held: nothing was written. */
  held: boolean;
}

/**
 * Records a batch of call outcomes of one bot in one statement, with their events, while
 * `owner` holds the bot's lease (otherwise nothing is written: `held` false). See
 * `AccessCompletion` for each outcome. An outcome applies only while the row still wants what
 * the call was made for (`desired` unchanged) and is still pending; when `desired` changed while
 * the call was out, a successful call still records what is now true on the platform
 * (`applied`), and the row stays pending for the new `desired` (no event: the member's access is
 * not settled yet). `synced_at` is `now` (the app clock); `updated_at` is the database's clock,
 * which drift repair compares with the moment it read the member list.
 */
export async function completeAccess(db: Db, owner: string, key: IntegrationKey, now: Date, batch: readonly AccessCompletion[]): Promise<CompleteResult> {
  if (batch.length === 0) return { recorded: new Set(), cascaded: 0, unhealthyTargets: [], held: true };
  const col = <T>(pick: (c: AccessCompletion) => T) => sql.param(batch.map(pick));
  const errorOf = (c: AccessCompletion) => ('error' in c ? c.error : null);
  const result = await db.execute(sql`
    WITH lease AS (
      SELECT generation FROM integrations
      WHERE project_id = ${key.projectId} AND platform = ${key.platform} AND lease_owner = ${owner} AND lease_expires_at > ${at(now)}
    ), input AS (
      SELECT i.*, CASE WHEN i.code IS NULL THEN NULL ELSE jsonb_build_object('code', i.code, 'message', i.message) END AS error
      FROM unnest(
        ${col((c) => c.targetId)}::uuid[], ${col((c) => c.userId)}::text[], ${col((c) => c.desired)}::text[],
        ${col((c) => c.outcome)}::text[], ${col((c) => errorOf(c)?.code ?? null)}::text[], ${col((c) => errorOf(c)?.message ?? null)}::text[],
        ${col((c) => (c.outcome === 'failed' ? c.targetFault : false))}::boolean[],
        ${col((c) => (c.outcome === 'retry' ? c.nextAttemptAt.toISOString() : null))}::timestamptz[]
      ) AS i(target_id, user_id, desired, outcome, code, message, target_fault, next_attempt_at)
      WHERE EXISTS (SELECT 1 FROM lease)
    ), faults AS (
      SELECT DISTINCT ON (target_id) target_id, error FROM input
      WHERE outcome = 'failed' AND target_fault
      ORDER BY target_id, user_id
    ), outcomes AS (
      -- A retry of a target another call of the batch blamed fails with that target's error.
      SELECT i.target_id, i.user_id, i.desired, i.next_attempt_at,
             CASE WHEN i.outcome = 'retry' AND f.target_id IS NOT NULL THEN 'failed' ELSE i.outcome END AS outcome,
             CASE WHEN i.outcome = 'retry' AND f.target_id IS NOT NULL THEN f.error ELSE i.error END AS error
      FROM input i LEFT JOIN faults f ON f.target_id = i.target_id
    ), rows_done AS (
      UPDATE access a SET
        state = CASE
          WHEN i.outcome = 'applied' AND a.desired = i.desired THEN 'synced'
          WHEN i.outcome = 'applied' AND a.state = 'failed' THEN 'failed'
          WHEN i.outcome = 'applied' AND a.desired = 'revoked' AND a.on_expiry = 'none' THEN 'synced'
          WHEN i.outcome = 'applied' THEN 'pending'
          WHEN i.outcome = 'unchanged' THEN 'synced'
          WHEN i.outcome = 'failed' THEN 'failed'
          WHEN i.outcome = 'waiting_for_member' THEN 'waiting_for_member'
          ELSE 'pending' END,
        applied = CASE i.outcome WHEN 'applied' THEN i.desired WHEN 'waiting_for_member' THEN 'revoked' ELSE a.applied END,
        last_error = CASE WHEN i.outcome IN ('applied', 'unchanged') THEN CASE WHEN a.state = 'failed' AND a.desired <> i.desired THEN a.last_error END ELSE i.error END,
        synced_at = CASE WHEN i.outcome IN ('applied', 'unchanged') AND a.desired = i.desired THEN ${at(now)} ELSE a.synced_at END,
        next_attempt_at = CASE
          WHEN i.outcome = 'retry' THEN i.next_attempt_at
          WHEN i.outcome = 'unauthorized' THEN ${at(now)}
          WHEN i.outcome = 'applied' AND a.desired <> i.desired AND a.state <> 'failed' THEN ${at(now)}
          ELSE a.next_attempt_at END,
        attempts = CASE WHEN i.outcome = 'applied' AND a.desired <> i.desired AND a.state <> 'failed' THEN 0 ELSE a.attempts END,
        failed_generation = CASE WHEN i.outcome = 'failed' THEN (SELECT generation FROM lease) ELSE a.failed_generation END,
        updated_at = now()
      FROM outcomes i
      WHERE a.project_id = ${key.projectId} AND a.target_id = i.target_id AND a.user_id = i.user_id
        AND (i.outcome = 'applied' OR (a.state = 'pending' AND a.desired = i.desired))
      RETURNING a.target_id, a.user_id, a.platform, a.state, a.last_error, i.outcome, i.desired, (a.desired = i.desired) AS current
    ), flagged AS (
      UPDATE targets t SET health = 'unhealthy', health_error = f.error, updated_at = now()
      FROM faults f
      WHERE t.id = f.target_id AND t.project_id = ${key.projectId}
      RETURNING t.id
    ), cascaded AS (
      -- The target is at fault: its other pending rows would fail the same way, with no call. That
      -- includes a row of the batch whose desired changed meanwhile (rows_done left it alone).
      UPDATE access a SET state = 'failed', last_error = f.error, failed_generation = (SELECT generation FROM lease), updated_at = now()
      FROM faults f
      WHERE a.target_id = f.target_id AND a.project_id = ${key.projectId} AND a.state = 'pending'
        AND NOT EXISTS (SELECT 1 FROM rows_done r WHERE r.target_id = a.target_id AND r.user_id = a.user_id)
      RETURNING a.target_id, a.user_id, a.platform, a.last_error
    ), unauthorized AS (
      UPDATE integrations SET health = 'unhealthy', last_error = (SELECT error FROM input WHERE outcome = 'unauthorized' LIMIT 1), updated_at = now()
      WHERE project_id = ${key.projectId} AND platform = ${key.platform} AND lease_owner = ${owner}
        AND EXISTS (SELECT 1 FROM input WHERE outcome = 'unauthorized')
      RETURNING 1
    ), announced AS (
      ${insertEvents([
        eventRows('access.granted', {
          projectId: sql`${key.projectId}::uuid`,
          data: outcomeData('r'),
          from: sql`FROM rows_done r WHERE r.outcome = 'applied' AND r.current AND r.desired = 'granted'`,
        }),
        eventRows('access.revoked', {
          projectId: sql`${key.projectId}::uuid`,
          data: outcomeData('r'),
          from: sql`FROM rows_done r WHERE r.outcome = 'applied' AND r.current AND r.desired = 'revoked'`,
        }),
        eventRows('access.failed', {
          projectId: sql`${key.projectId}::uuid`,
          data: { ...outcomeData('r'), error: sql<AccessError>`r.last_error` },
          from: sql`FROM (SELECT target_id, user_id, platform, last_error FROM rows_done WHERE outcome = 'failed'
                          UNION ALL SELECT target_id, user_id, platform, last_error FROM cascaded) r`,
        }),
      ])}
    )
    SELECT (SELECT count(*) FROM lease)::int AS held,
           (SELECT coalesce(array_agg(target_id::text || ':' || user_id), '{}') FROM rows_done) AS recorded,
           (SELECT count(*) FROM cascaded)::int AS cascaded,
           (SELECT coalesce(array_agg(id::text), '{}') FROM flagged) AS flagged`);
  const row = rowsOf<{ held: number; recorded: string[] | string; cascaded: number; flagged: string[] | string }>(result)[0]!;
  return { recorded: new Set(pgArray(row.recorded)), cascaded: row.cascaded, unhealthyTargets: pgArray(row.flagged), held: row.held > 0 };
}

/** `{user_id, target_id, platform}` of an access event, from a relation aliased `alias`. */
export function outcomeData(alias: string) {
  const a = sql.raw(alias);
  return {
    user_id: sql<string>`${a}.user_id`,
    target_id: sql<string>`${a}.target_id::text`,
    platform: sql<'discord' | 'telegram'>`${a}.platform`,
  };
}
