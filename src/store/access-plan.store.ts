import { sql, type SQL } from 'drizzle-orm';
import { planScopeOf } from '../domain/access/plan-scopes.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { MANAGED_KINDS } from '../domain/targets/target-rules.js';
import { effectiveOnExpiry } from './catalogue.views.js';
import { rowsOf, type Db } from './db.js';
import { markWrites } from './wakeups.js';

/**
 * The access planner's SQL (docs/access.md, "Desired state: what each change does"): from the
 * memberships, bans, plans and targets, the `desired` state of every (member, target) of a scope,
 * written to `access` set-based, one statement per scope (never a statement per member).
 *
 * A (member, target) is `granted` while the membership's end date is ahead of the app clock's now,
 * the user is not banned in the project, the membership's plan grants the target and the target is
 * enabled; `revoked` otherwise. Only targets tenure manages (MANAGED_KINDS) on a platform the
 * project has connected get rows: a row is created when it is first granted, and then kept (with
 * the target's platform ids and on_expiry copied in, so a deleted target's members can still be
 * revoked). Rows of a platform whose bot is disconnected are left as they are: disconnecting stops
 * syncing, it strips nobody.
 *
 * A row is written only when its `desired` changes (or its `on_expiry` does): a re-plan of a
 * million members that changes nothing writes nothing and wakes nobody. When it changes, the row
 * takes the state the planner/worker contract gives it (restated below): `synced` with no call when
 * the platform already agrees or there is nothing tenure granted to take back, `failed` without a
 * call on an unhealthy target, else `pending` for the worker from now, attempts 0.
 *
 * Every re-plan runs under one cluster-wide transaction lock, taken in a statement of its own
 * before the statement that reads the tables: re-plans therefore commit in the order of their
 * snapshots, and the last to commit for a member has read the latest memberships. Without it, a
 * re-plan that read a membership before its deletion could commit after the re-plan that read the
 * deletion, and grant again what was just revoked. The same lock makes the planners' claims of
 * events exclusive without row locks on `events`, which the live-update broadcaster claims with
 * SKIP LOCKED and would skip while a planner held them.
 */

/** Any fixed number, distinct from the migration lock (src/store/db.ts): all nodes agree on it. */
const PLANNER_LOCK = 7_346_221_002;

/**
 * Members per statement of a whole-project re-plan (ranges of user_id, the order of the indexes it
 * scans). Each range is one transaction, so a bulk extend of a million members locks the rows of
 * one range at a time, and other planning (and the embedded database's single connection) gets
 * turns in between. Measured in docs/access.md.
 */
export const PROJECT_BATCH = 20_000;
/** Embedded storage serves the API on the same one connection: ranges of about 150 ms there. */
export const EMBEDDED_PROJECT_BATCH = 5_000;

export interface AccessPlanOptions {
  projectBatch?: number;
}

export interface BatchOutcome {
  /** Events claimed (and marked planned). */
  events: number;
  /** Access rows whose `desired` (or `on_expiry`) changed. */
  changed: number;
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
type Executor = Pick<Tx, 'execute'>;

/** `platform/kind` of the targets that get access rows. */
const MANAGED = Object.entries(MANAGED_KINDS).flatMap(([platform, kinds]) => kinds.map((kind) => `${platform}/${kind}`));

/** The columns of an access row a re-plan compares. */
const ROW_COLUMNS = sql.raw('target_id, user_id, desired, on_expiry, platform');

/**
 * The members a re-plan reads: their memberships (a relation with the memberships columns) and
 * their access rows (ROW_COLUMNS), both of one project.
 */
interface Scope {
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
function usersScope(projectId: string, users: readonly string[]): Scope {
  const each = sql`unnest(${sql.param([...users])}::text[]) AS s(user_id)`;
  return {
    memberships: sql`(SELECT m.* FROM ${each} CROSS JOIN LATERAL (
      SELECT * FROM memberships WHERE project_id = ${projectId} AND user_id = s.user_id LIMIT 1) m)`,
    rows: sql`(SELECT a.* FROM ${each} CROSS JOIN LATERAL (
      SELECT ${ROW_COLUMNS} FROM access WHERE project_id = ${projectId} AND user_id = s.user_id OFFSET 0) a)`,
  };
}

export class AccessPlanStore {
  private readonly projectBatch: number;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
    options: AccessPlanOptions = {},
  ) {
    this.projectBatch = options.projectBatch ?? PROJECT_BATCH;
  }

  /**
   * Claims up to `limit` events the planner has not read (oldest first), re-plans the scopes they
   * name and marks them planned, in one transaction: a crash before the commit leaves them to be
   * claimed again. Events of one project are grouped: one statement for all the members they name
   * (usersScope), or one whole-project re-plan. A whole-project re-plan larger than one range
   * continues after the commit, range by range, its progress kept in `access_plan_jobs` with each
   * range; should the process die in between, the next planner's `resume` finishes it.
   */
  async planBatch(limit: number): Promise<BatchOutcome> {
    const first = await this.db.transaction(async (tx) => {
      await lock(tx);
      const claimed = rowsOf<{ id: string; project_id: string; type: string; user_id: string | null }>(
        await tx.execute(sql`
          SELECT id, project_id, type, coalesce(data->'membership'->>'user_id', data->>'user_id') AS user_id
          FROM events WHERE access_planned_at IS NULL ORDER BY seq LIMIT ${limit}`),
      );
      if (claimed.length === 0) return null;
      const scopes = new Map<string, { whole: boolean; users: Set<string> }>();
      for (const e of claimed) {
        const scope = planScopeOf(e.type);
        if (scope === null || (scope === 'user' && !e.user_id)) continue;
        let s = scopes.get(e.project_id);
        if (!s) scopes.set(e.project_id, (s = { whole: false, users: new Set() }));
        if (scope === 'project') s.whole = true;
        else s.users.add(e.user_id!);
      }
      const connected = await this.connected(tx, [...scopes.keys()]);
      let changed = 0;
      const unfinished: { projectId: string; after: string }[] = [];
      for (const [projectId, scope] of [...scopes].sort(([a], [b]) => a.localeCompare(b))) {
        if (!connected.has(projectId)) continue;
        if (scope.whole) {
          const range = await this.planRange(tx, projectId, null);
          changed += range.changed;
          await recordProgress(tx, projectId, range.next);
          if (range.next !== null) unfinished.push({ projectId, after: range.next });
        } else {
          changed += await this.replan(tx, projectId, usersScope(projectId, [...scope.users]));
        }
      }
      await tx.execute(sql`UPDATE events SET access_planned_at = now() WHERE id = ANY(${sql.param(claimed.map((e) => e.id))}::uuid[])`);
      return { events: claimed.length, changed, unfinished };
    });
    if (!first) return { events: 0, changed: 0 };
    let changed = first.changed;
    for (const { projectId, after } of first.unfinished) changed += await this.planRanges(projectId, after);
    return { events: first.events, changed };
  }

  /**
   * Re-plans every member of the project now (a connection, a resync, the reconciliation), range by
   * range. Returns how many access rows changed.
   */
  async planProject(projectId: string): Promise<number> {
    return this.planRanges(projectId, null);
  }

  /** Re-plans these members of the project now, in one statement per transaction of up to a range's size. */
  async planUsers(projectId: string, userIds: readonly string[]): Promise<number> {
    const unique = [...new Set(userIds)];
    let changed = 0;
    for (let i = 0; i < unique.length; i += this.projectBatch) {
      const users = unique.slice(i, i + this.projectBatch);
      changed += await this.db.transaction(async (tx) => {
        await lock(tx);
        return this.replan(tx, projectId, usersScope(projectId, users));
      });
    }
    return changed;
  }

  /**
   * Finishes the whole-project re-plans a crash interrupted: those whose progress row has not moved
   * for `staleMs` (a running one bumps it with every range). Returns how many access rows changed.
   */
  async resume(staleMs: number): Promise<number> {
    const stale = rowsOf<{ project_id: string; after_user_id: string }>(
      await this.db.execute(sql`
        SELECT project_id, after_user_id FROM access_plan_jobs
        WHERE updated_at < now() - make_interval(secs => ${staleMs / 1000}) ORDER BY updated_at`),
    );
    let changed = 0;
    for (const job of stale) changed += await this.planRanges(job.project_id, job.after_user_id);
    return changed;
  }

  /**
   * Ranges after `after` (exclusive; null: from the start), each its own transaction, which also
   * records the progress (or, with the last range, removes it).
   */
  private async planRanges(projectId: string, after: string | null): Promise<number> {
    let changed = 0;
    let from = after;
    for (;;) {
      const range = await this.db.transaction(async (tx) => {
        await lock(tx);
        const result = (await this.connected(tx, [projectId])).size === 0 ? { changed: 0, next: null } : await this.planRange(tx, projectId, from);
        await recordProgress(tx, projectId, result.next);
        return result;
      });
      changed += range.changed;
      if (range.next === null) return changed;
      from = range.next;
    }
  }

  /**
   * One range of a whole-project re-plan: the members after `after` up to the range's last
   * membership's user_id (the last range: every user_id after `after`, so access rows of members
   * without a membership any more are covered too). Returns where the next range starts, or null.
   */
  private async planRange(tx: Executor, projectId: string, after: string | null): Promise<{ changed: number; next: string | null }> {
    const lower = after === null ? sql`true` : sql`user_id > ${after}`;
    const last = rowsOf<{ user_id: string }>(
      await tx.execute(sql`
        SELECT user_id FROM memberships WHERE project_id = ${projectId} AND ${lower}
        ORDER BY user_id OFFSET ${this.projectBatch - 1} LIMIT 1`),
    )[0]?.user_id;
    const range = last === undefined ? lower : sql`${lower} AND user_id <= ${last}`;
    const changed = await this.replan(tx, projectId, {
      memberships: sql`(SELECT * FROM memberships WHERE project_id = ${projectId} AND ${range})`,
      rows: sql`(SELECT ${ROW_COLUMNS} FROM access WHERE project_id = ${projectId} AND ${range})`,
    });
    return { changed, next: last ?? null };
  }

  /** The projects among these with at least one platform connected. */
  private async connected(tx: Executor, projectIds: readonly string[]): Promise<Set<string>> {
    if (projectIds.length === 0) return new Set();
    const result = await tx.execute(sql`
      SELECT DISTINCT project_id FROM integrations WHERE project_id = ANY(${sql.param([...projectIds])}::uuid[])`);
    return new Set(rowsOf<{ project_id: string }>(result).map((r) => r.project_id));
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
   */
  private async replan(tx: Executor, projectId: string, scope: Scope): Promise<number> {
    const now = this.clock.now().toISOString();
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
                 CASE WHEN m.end_date > ${now}::timestamptz AND t.is_enabled
                           AND NOT EXISTS (SELECT 1 FROM bans b WHERE b.project_id = m.project_id AND b.user_id = m.user_id)
                      THEN 'granted' ELSE 'revoked' END AS desired
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
}

/**
 * Where a whole-project re-plan stands, written in the transaction of the range it follows: the
 * next range starts after `next`; null: done (the row goes). A later pass of the same project
 * takes the row over (it covers every range again).
 */
async function recordProgress(tx: Executor, projectId: string, next: string | null): Promise<void> {
  await tx.execute(
    next === null
      ? sql`DELETE FROM access_plan_jobs WHERE project_id = ${projectId}`
      : sql`INSERT INTO access_plan_jobs (project_id, after_user_id) VALUES (${projectId}, ${next})
            ON CONFLICT (project_id) DO UPDATE SET after_user_id = excluded.after_user_id, updated_at = now()`,
  );
}

/** Takes the planners' lock until the transaction ends (see the class comment). */
async function lock(tx: Executor): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${PLANNER_LOCK})`);
}

/**
 * The assignments of a row whose desired state is (re)decided (DESIGN.md's planner/worker
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
