import { sql, type SQL } from 'drizzle-orm';
import { MANAGED_KINDS } from '../domain/targets/target-rules.js';
import { activeAt, desiredAccessSql } from './rule-twins.js';
import { effectiveOnExpiry } from './catalogue.views.js';
import { rowsOf, type Db } from '../database/db.js';
import { markWrites } from '../database/wakeups.js';

/**
 * The one statement of a re-plan (access-plan.store.ts): the `desired` state of the members a
 * `Scope` reads, compared with their access rows and written where it differs, each written row's
 * sync state decided by `restate` (the planner/worker contract: docs/access-planning.md).
 */

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Executor = Pick<Tx, 'execute'>;

/** `platform/kind` of the targets that get access rows. */
const MANAGED = Object.entries(MANAGED_KINDS).flatMap(([platform, kinds]) => kinds.map((kind) => `${platform}/${kind}`));

/** The columns of an access row a re-plan compares. */
const ROW_COLUMNS = sql.raw('target_id, user_id, desired, on_expiry, platform');

/**
 * The members a re-plan reads: their memberships (a relation with the memberships columns) and
 * their access rows (ROW_COLUMNS), both of one project.
 */
export interface Scope {
  memberships: SQL;
  rows: SQL;
}

/**
 * These members, read one index lookup each (LATERAL, kept from being flattened into a join by its
 * LIMIT / OFFSET 0). As `user_id = ANY(…)`, PostgreSQL 15 costs each array element as a descent of
 * the index and, with statistics that have not caught up with a large write (a connection granting
 * a million members, a bulk extend), chose instead to read the project's whole index range and
 * filter user_id in the heap: 0.45 s a batch instead of 0.02 s.
 */
export function usersScope(projectId: string, users: readonly string[]): Scope {
  const each = sql`unnest(${sql.param([...users])}::text[]) AS s(user_id)`;
  return {
    memberships: sql`(SELECT m.* FROM ${each} CROSS JOIN LATERAL (
      SELECT * FROM memberships WHERE project_id = ${projectId} AND user_id = s.user_id LIMIT 1) m)`,
    rows: sql`(SELECT a.* FROM ${each} CROSS JOIN LATERAL (
      SELECT ${ROW_COLUMNS} FROM access WHERE project_id = ${projectId} AND user_id = s.user_id OFFSET 0) a)`,
  };
}

/** The members of a range of a whole-project re-plan: `range` is a condition on user_id. */
export function rangeScope(projectId: string, range: SQL): Scope {
  return {
    memberships: sql`(SELECT * FROM memberships WHERE project_id = ${projectId} AND ${range})`,
    rows: sql`(SELECT ${ROW_COLUMNS} FROM access WHERE project_id = ${projectId} AND ${range})`,
  };
}

/**
 * The re-plan of the members of `projectId` that `scope` reads, in one statement: `want` is what their memberships grant on the connected platforms, `cur` the
 * rows they have there, `diff` the pairs that differ; rows wanted whose desired or on_expiry
 * differs are upserted (`up`), rows no longer wanted are revoked (`gone`). The two touch disjoint
 * rows. The state each written row takes is decided on the row as it is when it is written
 * (after any concurrent worker completion), not as the snapshot read it: `applied` may have just
 * changed.
 *
 * `want` and `cur` meet in one FULL JOIN, which PostgreSQL can only run as a hash or merge join:
 * linear whatever the statistics say. They are often wrong here (a project just connected has a
 * million rows the statistics have not seen), and an anti-join against a CTE believed to hold one
 * row ran as a nested loop: 20,000 members took 80 s instead of 0.1 s.
 *
 * `desired` is the rule of src/domain/access/access-rules.ts (desiredAccessSql), a membership
 * active at `at`, the app clock's now (activeAt).
 */
export async function replan(tx: Executor, projectId: string, scope: Scope, at: Date): Promise<number> {
  const result = await tx.execute(
    markWrites(
      sql`
      WITH integ AS MATERIALIZED (
        SELECT platform, generation FROM integrations WHERE project_id = ${projectId}
      ), tgt AS MATERIALIZED (
        SELECT t.id, t.platform, t.kind, t.external_id, t.is_enabled, t.health = 'unhealthy' AS unhealthy, t.health_error,
               ${effectiveOnExpiry('t')} AS on_expiry, CASE WHEN t.kind = 'role' THEN g.external_id END AS guild_id
        FROM targets t LEFT JOIN targets g ON g.id = t.parent_target_id
        WHERE t.project_id = ${projectId} AND t.platform || '/' || t.kind = ANY(${sql.param(MANAGED)}::text[])
          AND t.platform IN (SELECT platform FROM integ)
      ), want AS MATERIALIZED (
        SELECT m.user_id, t.id AS target_id, t.platform, t.kind, t.external_id, t.guild_id, t.on_expiry,
               -- The ban looked up per member (its primary key), never a join the statistics could misjudge.
               ${desiredAccessSql({
                 active: activeAt(sql`m.end_date`, at),
                 enabled: sql`t.is_enabled`,
                 banned: sql`EXISTS (SELECT 1 FROM bans b WHERE b.project_id = m.project_id AND b.user_id = m.user_id)`,
               })} AS desired
        FROM ${scope.memberships} m
        JOIN plan_targets pt ON pt.plan_id = m.plan_id
        JOIN tgt t ON t.id = pt.target_id
      ), cur AS MATERIALIZED (
        SELECT a.target_id, a.user_id, a.desired, a.on_expiry FROM ${scope.rows} a
        WHERE a.platform IN (SELECT platform FROM integ)
      ), diff AS MATERIALIZED (
        SELECT coalesce(w.target_id, c.target_id) AS target_id, coalesce(w.user_id, c.user_id) AS user_id,
               w.platform, w.kind, w.external_id, w.guild_id,
               -- Not wanted: revoked, under the target's on_expiry now (or, the target deleted, the one copied).
               coalesce(w.desired, 'revoked') AS desired, coalesce(w.on_expiry, t.on_expiry, c.on_expiry) AS on_expiry,
               w.target_id IS NULL AS gone, coalesce(t.unhealthy, false) AS unhealthy, t.health_error
        FROM want w FULL JOIN cur c ON c.target_id = w.target_id AND c.user_id = w.user_id
        LEFT JOIN tgt t ON t.id = coalesce(w.target_id, c.target_id)
        -- A new row only for a grant: a member never granted has nothing to revoke.
        WHERE CASE WHEN c.target_id IS NULL THEN w.desired = 'granted'
                   ELSE c.desired <> coalesce(w.desired, 'revoked') OR c.on_expiry <> coalesce(w.on_expiry, t.on_expiry, c.on_expiry) END
      ), up AS (
        INSERT INTO access AS a (project_id, target_id, user_id, platform, kind, external_id, guild_id, on_expiry, desired,
                                 state, last_error, failed_generation, attempts, next_attempt_at)
        SELECT ${projectId}::uuid, d.target_id, d.user_id, d.platform, d.kind, d.external_id, d.guild_id, d.on_expiry, d.desired,
               CASE WHEN d.unhealthy THEN 'failed' ELSE 'pending' END,
               CASE WHEN d.unhealthy THEN d.health_error END,
               CASE WHEN d.unhealthy THEN (SELECT generation FROM integ WHERE platform = d.platform) END, 0, now()
        FROM diff d WHERE NOT d.gone
        ON CONFLICT (target_id, user_id) DO UPDATE SET
          desired = excluded.desired, on_expiry = excluded.on_expiry,
          ${restate({
            restate: sql`a.desired <> excluded.desired OR excluded.desired = 'revoked'`,
            desired: sql`excluded.desired`,
            onExpiry: sql`excluded.on_expiry`,
            unsynced: { state: sql`excluded.state`, error: sql`excluded.last_error`, generation: sql`excluded.failed_generation` },
          })}
        WHERE a.desired <> excluded.desired OR a.on_expiry <> excluded.on_expiry
        RETURNING 1
      ), gone AS (
        -- The member's membership is gone or moved to another plan, or the target left the plan,
        -- was disabled away from it or deleted.
        UPDATE access a SET desired = 'revoked', on_expiry = d.on_expiry,
          ${restate({
            restate: sql`true`,
            desired: sql`'revoked'`,
            onExpiry: sql`d.on_expiry`,
            unsynced: {
              state: sql`CASE WHEN d.unhealthy THEN 'failed' ELSE 'pending' END`,
              error: sql`CASE WHEN d.unhealthy THEN d.health_error END`,
              generation: sql`CASE WHEN d.unhealthy THEN (SELECT generation FROM integ WHERE platform = a.platform) END`,
            },
          })}
        FROM diff d
        WHERE d.gone AND a.target_id = d.target_id AND a.user_id = d.user_id AND a.project_id = ${projectId}
          AND (a.desired = 'granted' OR a.on_expiry <> d.on_expiry)
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM up)::int + (SELECT count(*) FROM gone)::int AS changed`,
      ['access'],
    ),
  );
  return rowsOf<{ changed: number }>(result)[0]?.changed ?? 0;
}

/**
 * The assignments of a row whose desired state is (re)decided (the planner/worker
 * contract): when `restate` is false (only a granted row's on_expiry changed) the sync state is
 * kept. Otherwise: `synced` with no call when the platform already agrees (desired = applied) or
 * when a revoke has nothing to take back (tenure never saw it granted, or on_expiry `none`; drift
 * repair catches the rest), except a Telegram revoke while the member has a live invite link,
 * which the worker must revoke (and remove whoever came in through it); else `unsynced` (pending,
 * or failed on an unhealthy target), attempts 0, due now. `a` is the row as it is when written.
 */
function restate(o: {
  restate: SQL;
  desired: SQL;
  onExpiry: SQL;
  unsynced: { state: SQL; error: SQL; generation: SQL };
}): SQL {
  // A Telegram member with a live invite link (not revoked, not expired; used or not) is never
  // revoked by the plan alone: the worker revokes the link, and removes them if they came in.
  const liveLink = sql`(a.platform = 'telegram' AND EXISTS (
    SELECT 1 FROM telegram_invites i WHERE i.project_id = a.project_id AND i.user_id = a.user_id AND i.target_id = a.target_id
      AND i.revoked_at IS NULL AND i.expires_at > now()))`;
  const synced = sql`((${o.desired} = a.applied OR (${o.desired} = 'revoked' AND (a.applied IS NULL OR ${o.onExpiry} = 'none')))
    AND NOT (${o.desired} = 'revoked' AND ${liveLink}))`;
  const pick = (kept: SQL, whenSynced: SQL, otherwise: SQL) =>
    sql`CASE WHEN NOT (${o.restate}) THEN ${kept} WHEN ${synced} THEN ${whenSynced} ELSE ${otherwise} END`;
  return sql`state = ${pick(sql`a.state`, sql`'synced'`, o.unsynced.state)},
    last_error = ${pick(sql`a.last_error`, sql`NULL::jsonb`, o.unsynced.error)},
    failed_generation = ${pick(sql`a.failed_generation`, sql`NULL::int`, o.unsynced.generation)},
    synced_at = ${pick(sql`a.synced_at`, sql`now()`, sql`a.synced_at`)},
    attempts = CASE WHEN ${o.restate} THEN 0 ELSE a.attempts END,
    next_attempt_at = CASE WHEN ${o.restate} THEN now() ELSE a.next_attempt_at END,
    updated_at = now()`;
}
