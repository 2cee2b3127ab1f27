import { sql } from 'drizzle-orm';
import type { OutcomeWrite, TargetFault } from '../domain/access/access-completions.js';
import type { AccessError } from './access-worker.store.js';
import { type IntegrationKey } from './bot-leases.store.js';
import { pgArray, rowsOf, type Db } from '../database/db.js';
import { eventRows, insertEvents } from './outbox.js';
import { at } from '../database/sql.js';

/**
 * The statements that record the access engine's call outcomes (AccessWorkerStore's
 * `recordOutcomes`, `failTargets`, `flagRefusedBot`; the use case, which decides what each outcome
 * writes, is src/domain/access/access-completions.ts). Each is fenced by the bot's lease.
 */

/**
 * Writes a batch of one bot's outcomes to their rows, with the events of the rows they settle, in
 * one statement while `owner` holds the bot's lease at `now`. A write applies while the row still
 * wants what the call was made for (`desired` unchanged) and is pending; a call that succeeded is
 * recorded whatever the row wants now: the platform holds what it did (`applied`), and a row whose
 * `desired` changed is due at once for the new one (no event: the member's access is not settled
 * yet), unless it failed meanwhile or its new `desired` needs no call. `synced_at` is `now` (the
 * app clock); `updated_at` is the database's clock, which drift repair compares with the moment it
 * read the member list.
 */
export async function recordOutcomes(
  db: Db,
  owner: string,
  key: IntegrationKey,
  now: Date,
  writes: readonly OutcomeWrite[],
): Promise<{ generation: number | null; recorded: string[] }> {
  const col = <T>(pick: (w: OutcomeWrite) => T) => sql.param(writes.map(pick));
  const result = await db.execute(sql`
    WITH lease AS (
      SELECT generation FROM integrations
      WHERE project_id = ${key.projectId} AND platform = ${key.platform} AND lease_owner = ${owner} AND lease_expires_at > ${at(now)}
    ), input AS (
      SELECT i.*, CASE WHEN i.code IS NULL THEN NULL ELSE jsonb_build_object('code', i.code, 'message', i.message) END AS error
      FROM unnest(
        ${col((w) => w.targetId)}::uuid[], ${col((w) => w.userId)}::text[], ${col((w) => w.desired)}::text[],
        ${col((w) => w.succeeded)}::boolean[], ${col((w) => w.state)}::text[], ${col((w) => w.applied)}::text[],
        ${col((w) => w.error?.code ?? null)}::text[], ${col((w) => w.error?.message ?? null)}::text[], ${col((w) => w.synced)}::boolean[],
        ${col((w) => w.nextAttemptAt?.toISOString() ?? null)}::timestamptz[], ${col((w) => w.event)}::text[]
      ) AS i(target_id, user_id, desired, succeeded, state, applied, code, message, synced, next_attempt_at, event)
      WHERE EXISTS (SELECT 1 FROM lease)
    ), rows_done AS (
      UPDATE access a SET
        state = CASE
          WHEN a.desired = i.desired THEN i.state
          WHEN a.state = 'failed' THEN 'failed'
          WHEN a.desired = 'revoked' AND a.on_expiry = 'none' THEN 'synced'
          ELSE 'pending' END,
        applied = coalesce(i.applied, a.applied),
        last_error = CASE WHEN a.desired = i.desired THEN i.error WHEN a.state = 'failed' THEN a.last_error END,
        synced_at = CASE WHEN a.desired = i.desired AND i.synced THEN ${at(now)} ELSE a.synced_at END,
        next_attempt_at = CASE
          WHEN a.desired = i.desired THEN coalesce(i.next_attempt_at, a.next_attempt_at)
          WHEN a.state <> 'failed' THEN ${at(now)}
          ELSE a.next_attempt_at END,
        attempts = CASE WHEN a.desired <> i.desired AND a.state <> 'failed' THEN 0 ELSE a.attempts END,
        failed_generation = CASE WHEN a.desired = i.desired AND i.state = 'failed' THEN (SELECT generation FROM lease) ELSE a.failed_generation END,
        updated_at = now()
      FROM input i
      WHERE a.project_id = ${key.projectId} AND a.target_id = i.target_id AND a.user_id = i.user_id
        AND (i.succeeded OR (a.state = 'pending' AND a.desired = i.desired))
      RETURNING a.target_id, a.user_id, a.platform, a.last_error, i.event, (a.desired = i.desired) AS current
    ), announced AS (
      ${insertEvents([
        eventRows('access.granted', {
          projectId: sql`${key.projectId}::uuid`,
          data: outcomeData('r'),
          from: sql`FROM rows_done r WHERE r.current AND r.event = 'access.granted'`,
        }),
        eventRows('access.revoked', {
          projectId: sql`${key.projectId}::uuid`,
          data: outcomeData('r'),
          from: sql`FROM rows_done r WHERE r.current AND r.event = 'access.revoked'`,
        }),
        eventRows('access.failed', {
          projectId: sql`${key.projectId}::uuid`,
          data: { ...outcomeData('r'), error: sql<AccessError>`r.last_error` },
          from: sql`FROM rows_done r WHERE r.current AND r.event = 'access.failed'`,
        }),
      ])}
    )
    SELECT (SELECT generation FROM lease) AS generation,
           (SELECT coalesce(array_agg(target_id::text || ':' || user_id), '{}') FROM rows_done) AS recorded`);
  const row = rowsOf<{ generation: number | string | null; recorded: string[] | string }>(result)[0]!;
  return { generation: row.generation === null ? null : Number(row.generation), recorded: pgArray(row.recorded) };
}

/**
 * Flags each faulted target unhealthy with its error, and fails its pending rows but `spared`
 * (`target_id:user_id`) with that error, as of lease `generation`, with `access.failed` each: one
 * statement, one fact (the target is at fault: its rows would fail the same way, with no call).
 */
export async function failTargets(
  db: Db,
  projectId: string,
  generation: number,
  faults: readonly TargetFault[],
  spared: readonly string[],
): Promise<{ flagged: string[]; cascaded: number }> {
  const result = await db.execute(sql`
    WITH faults AS (
      SELECT f.target_id, jsonb_build_object('code', f.code, 'message', f.message) AS error
      FROM unnest(${sql.param(faults.map((f) => f.targetId))}::uuid[], ${sql.param(faults.map((f) => f.error.code))}::text[],
                  ${sql.param(faults.map((f) => f.error.message))}::text[]) AS f(target_id, code, message)
    ), flagged AS (
      UPDATE targets t SET health = 'unhealthy', health_error = f.error, updated_at = now()
      FROM faults f
      WHERE t.id = f.target_id AND t.project_id = ${projectId}
      RETURNING t.id
    ), cascaded AS (
      UPDATE access a SET state = 'failed', last_error = f.error, failed_generation = ${generation}::int, updated_at = now()
      FROM faults f
      WHERE a.target_id = f.target_id AND a.project_id = ${projectId} AND a.state = 'pending'
        AND (a.target_id::text || ':' || a.user_id) <> ALL(${sql.param([...spared])}::text[])
      RETURNING a.target_id, a.user_id, a.platform, a.last_error
    ), announced AS (
      ${insertEvents([
        eventRows('access.failed', {
          projectId: sql`${projectId}::uuid`,
          data: { ...outcomeData('c'), error: sql<AccessError>`c.last_error` },
          from: sql`FROM cascaded c`,
        }),
      ])}
    )
    SELECT (SELECT coalesce(array_agg(id::text), '{}') FROM flagged) AS flagged, (SELECT count(*) FROM cascaded)::int AS cascaded`);
  const row = rowsOf<{ flagged: string[] | string; cascaded: number }>(result)[0]!;
  return { flagged: pgArray(row.flagged), cascaded: row.cascaded };
}

/** Flags the bot unhealthy with `error` while `owner` holds its lease at `now`: it is not taken again until reconnected. */
export async function flagRefusedBot(db: Db, owner: string, key: IntegrationKey, now: Date, error: AccessError): Promise<void> {
  await db.execute(sql`
    UPDATE integrations SET health = 'unhealthy', last_error = jsonb_build_object('code', ${error.code}::text, 'message', ${error.message}::text), updated_at = now()
    WHERE project_id = ${key.projectId} AND platform = ${key.platform} AND lease_owner = ${owner} AND lease_expires_at > ${at(now)}`);
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
