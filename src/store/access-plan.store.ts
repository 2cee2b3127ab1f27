import { sql } from 'drizzle-orm';
import { planScopeOf } from '../domain/access/plan-scopes.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { rangeScope, replan, usersScope, type Executor } from './access-replan.js';
import { rowsOf, type Db } from '../database/db.js';

/**
 * The access planner's SQL (docs/access-planning.md, "Desired state: what each change does"): from the
 * memberships, bans, plans and targets, the `desired` state of every (member, target) of a scope,
 * written to `access` set-based, one statement per scope (never a statement per member).
 *
 * A (member, target) is `granted` while the membership's end date is ahead of the app clock's now,
 * the user is not banned in the project, the membership's plan grants the target and the target is
 * enabled; `revoked` otherwise (the rule and its SQL: src/domain/access/access-rules.ts). Only targets tenure manages (MANAGED_KINDS) on a platform the
 * project has connected get rows: a row is created when it is first granted, and then kept (with
 * the target's platform ids and on_expiry copied in, so a deleted target's members can still be
 * revoked). Rows of a platform whose bot is disconnected are left as they are: disconnecting stops
 * syncing, it strips nobody.
 *
 * A row is written only when its `desired` changes (or its `on_expiry` does): a re-plan of a
 * million members that changes nothing writes nothing and wakes nobody. When it changes, the row
 * takes the state the planner/worker contract gives it (restated at `restate`): `synced` with no
 * call when the platform already agrees or there is nothing tenure granted to take back, `failed`
 * without a call on an unhealthy target, else `pending` for the worker from now, attempts 0. That
 * statement, `replan`, and `restate` are in access-replan.ts.
 *
 * Every re-plan runs under one cluster-wide transaction lock, taken in a statement of its own
 * before the statement that reads the tables: re-plans therefore commit in the order of their
 * snapshots, and the last to commit for a member has read the latest memberships. Without it, a
 * re-plan that read a membership before its deletion could commit after the re-plan that read the
 * deletion, and grant again what was just revoked. The same lock makes the planners' claims of
 * events (their `event_plan_queue` rows) exclusive without row locks.
 */

/** Any fixed number, distinct from the migration lock (src/database/db.ts): all nodes agree on it. */
const PLANNER_LOCK = 7_346_221_002;

/**
 * Members per statement of a whole-project re-plan (ranges of user_id, the order of the indexes it
 * scans). Each range is one transaction, so a bulk extend of a million members locks the rows of
 * one range at a time, and other planning (and the embedded database's single connection) gets
 * turns in between. Measured in docs/access-planning.md.
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
   * Claims up to `limit` events the planner has not read (oldest first: `event_plan_queue`),
   * re-plans the scopes they name and takes them off the queue, in one transaction: a crash before
   * the commit leaves them to be claimed again. Events of one project are grouped: one statement for all the members they name
   * (usersScope), or one whole-project re-plan. A whole-project re-plan larger than one range
   * continues after the commit, range by range, its progress kept in `access_plan_jobs` with each
   * range; should the process die in between, the next planner's `resume` finishes it.
   */
  async planBatch(limit: number): Promise<BatchOutcome> {
    // Most wake-ups find the queue empty (every write wakes the planner; only events of projects
    // with a platform connected are queued): one read, without the transaction and the lock.
    const queued = rowsOf<{ any: boolean }>(await this.db.execute(sql`SELECT EXISTS (SELECT 1 FROM event_plan_queue) AS any`));
    if (!queued[0]?.any) return { events: 0, changed: 0 };
    const first = await this.db.transaction(async (tx) => {
      await lock(tx);
      // One statement reads the batch and which of its projects are connected, and when none is
      // (nothing to plan: their bots were disconnected since the events were queued) takes the
      // batch off the queue too, in one statement rather than three.
      const claimed = rowsOf<{ seq: number | string; project_id: string; type: string; user_id: string | null; connected: boolean; marked: boolean }>(
        await tx.execute(sql`
          WITH queued AS (
            -- The queue's head first, then its events by seq: one index lookup each, whatever the
            -- planner guesses of a queue whose rows come and go faster than its statistics.
            SELECT seq FROM event_plan_queue ORDER BY seq LIMIT ${limit}
          ), batch AS (
            SELECT e.seq, e.project_id, e.type, coalesce(e.data->'membership'->>'user_id', e.data->>'user_id') AS user_id
            FROM queued q JOIN events e ON e.seq = q.seq
          ), conn AS (
            SELECT DISTINCT project_id FROM integrations WHERE project_id IN (SELECT project_id FROM batch)
          ), marked AS (
            DELETE FROM event_plan_queue
            WHERE seq IN (SELECT seq FROM batch) AND NOT EXISTS (SELECT 1 FROM conn)
            RETURNING seq
          )
          SELECT b.seq, b.project_id, b.type, b.user_id, b.project_id IN (SELECT project_id FROM conn) AS connected,
                 EXISTS (SELECT 1 FROM marked) AS marked
          FROM batch b ORDER BY b.seq`),
      );
      if (claimed.length === 0) return null;
      if (claimed[0]!.marked) return { events: claimed.length, changed: 0, unfinished: [] };
      const scopes = new Map<string, { whole: boolean; users: Set<string> }>();
      for (const e of claimed) {
        const scope = planScopeOf(e.type);
        if (scope === null || (scope === 'user' && !e.user_id)) continue;
        let s = scopes.get(e.project_id);
        if (!s) scopes.set(e.project_id, (s = { whole: false, users: new Set() }));
        if (scope === 'project') s.whole = true;
        else s.users.add(e.user_id!);
      }
      const connected = new Set(claimed.filter((e) => e.connected).map((e) => e.project_id));
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
          changed += await replan(tx, projectId, usersScope(projectId, [...scope.users]), this.clock.now());
        }
      }
      await tx.execute(sql`DELETE FROM event_plan_queue WHERE seq = ANY(${sql.param(claimed.map((e) => String(e.seq)))}::bigint[])`);
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
        return replan(tx, projectId, usersScope(projectId, users), this.clock.now());
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
    const changed = await replan(tx, projectId, rangeScope(projectId, range), this.clock.now());
    return { changed, next: last ?? null };
  }

  /** The projects among these with at least one platform connected. */
  private async connected(tx: Executor, projectIds: readonly string[]): Promise<Set<string>> {
    if (projectIds.length === 0) return new Set();
    const result = await tx.execute(sql`
      SELECT DISTINCT project_id FROM integrations WHERE project_id = ANY(${sql.param([...projectIds])}::uuid[])`);
    return new Set(rowsOf<{ project_id: string }>(result).map((r) => r.project_id));
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
