import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from './db.js';
import { iso } from './memberships.store.js';
import { insertEvent } from './outbox.js';

/**
 * Bulk extends as durable jobs (table `bulk_extend_jobs`, docs/memberships.md "Bulk extend"). One
 * UPDATE over every membership of a project would hold every member's row lock until it commits
 * (seconds at a million members), so a single extend of any member would wait for all of it.
 * Instead a job sets the memberships in batches taken in user_id order, the order of the unique
 * index `memberships_project_user_key`: each batch is one statement, its own transaction, that
 * sets the batch's rows and advances the job's cursor together, so a member's row is locked only
 * while its batch runs, and a crash loses at most a batch that then rolls back. The batch that
 * finds fewer than a batch left sets them, marks the job done and writes the call's one
 * `membership.bulk-extended` event, in the same statement: the event is written once, whoever
 * runs the last batch. (Why user_id, one column, and not (created_at, id): PostgreSQL before 18
 * stops a btree scan on the first column of a row comparison only, so the upper bound
 * `(created_at, id) <= (…)` of a batch of memberships sharing one created_at, as an import makes
 * them, did not end the scan: every batch read the rest of the project's index.)
 *
 * What a job covers: the memberships of the project created at or before its `boundary` (the
 * start of the call); one created later keeps the end date it was created with. A second bulk
 * extend of the project supersedes a running one (the later call wins): in the transaction that
 * records it, the running job is marked `superseded`, with its event, its total being every
 * membership it covered, as if it had finished just before the new call began; the new job then
 * sets every membership, those the old one had already set included.
 */

export interface BulkExtendJob {
  id: string;
  projectId: string;
}

export type BulkExtendStatus = 'running' | 'done' | 'superseded';

export interface BulkExtendProgress {
  status: BulkExtendStatus;
  /** Memberships set so far; once the job is over, its total. */
  total: number;
}

export class BulkExtendStore {
  constructor(private readonly db: Db) {}

  /**
   * Records a bulk extend of the project to `endDate`, superseding (with its event) a job of the
   * project still running. Starts of one project take turns on the project's row.
   */
  async start(projectId: string, endDate: Date): Promise<BulkExtendJob> {
    return this.db.transaction(async (tx) => {
      // Its own statement, so that the next one's snapshot sees the job a start that held the lock
      // before this one committed. FOR NO KEY UPDATE does not conflict with the key-share locks of
      // inserted memberships.
      await tx.execute(sql`SELECT 1 FROM projects WHERE id = ${projectId} FOR NO KEY UPDATE`);
      // The new job's INSERT reads `old`, so it runs after the running job is superseded (one
      // running job per project).
      const result = await tx.execute(sql`
        WITH old AS (
          UPDATE bulk_extend_jobs j SET status = 'superseded', finished_at = now(), heartbeat_at = now(),
            total = j.total + (
              SELECT count(*)::int FROM memberships m
              WHERE m.project_id = j.project_id AND m.user_id > j.cursor_user_id AND m.created_at <= j.boundary)
          WHERE j.project_id = ${projectId} AND j.status = 'running'
          RETURNING j.project_id, j.total, j.end_date
        ), ev AS (${insertEvent('membership.bulk-extended', {
          projectId: sql`project_id`,
          data: { total: sql<number>`total`, new_end_date: iso(sql`end_date`) },
          from: sql`FROM old`,
        })})
        INSERT INTO bulk_extend_jobs (project_id, end_date)
        SELECT ${projectId}::uuid, ${endDate}::timestamptz WHERE (SELECT count(*) FROM old) >= 0
        RETURNING id, project_id`);
      const row = rowsOf<{ id: string; project_id: string }>(result)[0]!;
      return { id: row.id, projectId: row.project_id };
    });
  }

  /**
   * Runs the job's next batch of up to `batchSize` memberships, in one statement: locks the job
   * row (so two runners of one job take turns, each from the cursor the other left), finds the
   * batch's last user_id, sets the memberships after the cursor up to it that the job covers,
   * and advances the cursor.
   * When nothing is left the job is marked done and its event written. A job that is no longer
   * running (done by another runner, or superseded) is left as it is. Returns the job's state after.
   */
  async runBatch(job: BulkExtendJob, batchSize: number): Promise<BulkExtendProgress> {
    // The job's values are read through scalar subqueries (evaluated once, before the scans) so
    // that the memberships scans are plain index range scans of memberships_project_user_key. The
    // batch ends at its last user_id; the last batch, at the project's greatest one.
    // A batch's commit need not wait for its WAL to reach the disk (synchronous_commit off for its
    // own transaction, set_config(…, true)): a crash can lose only batches whose cursor advance is
    // lost with them, which the resume runs again, and the row locks are released sooner. The last
    // batch (the event, the job done) commits durably, so the answer and its event are never undone.
    const j = (column: string) => sql.raw(`(SELECT ${column} FROM job)`);
    const result = await this.db.execute(sql`
      WITH job AS MATERIALIZED (
        SELECT * FROM bulk_extend_jobs WHERE id = ${job.id} AND status = 'running' FOR UPDATE
      ), last_key AS MATERIALIZED (
        SELECT user_id FROM memberships
        WHERE project_id = ${job.projectId} AND user_id > ${j('cursor_user_id')}
        ORDER BY user_id OFFSET ${batchSize - 1} LIMIT 1
      ), upd AS (
        UPDATE memberships m SET end_date = ${j('end_date')}, status = 'active', updated_at = now()
        WHERE m.project_id = ${job.projectId} AND m.user_id > ${j('cursor_user_id')}
          AND m.user_id <= coalesce(
            (SELECT user_id FROM last_key),
            (SELECT max(user_id) FROM memberships WHERE project_id = ${job.projectId}))
          AND m.created_at <= ${j('boundary')}
        RETURNING 1
      ), adv AS (
        UPDATE bulk_extend_jobs b SET
          cursor_user_id = coalesce((SELECT user_id FROM last_key), b.cursor_user_id),
          total = b.total + (SELECT count(*)::int FROM upd),
          status = CASE WHEN EXISTS (SELECT 1 FROM last_key) THEN 'running' ELSE 'done' END,
          finished_at = CASE WHEN EXISTS (SELECT 1 FROM last_key) THEN NULL ELSE now() END,
          heartbeat_at = now()
        FROM job WHERE b.id = job.id
        RETURNING b.project_id, b.total, b.status, b.end_date
      ), ev AS (${insertEvent('membership.bulk-extended', {
        projectId: sql`project_id`,
        data: { total: sql<number>`total`, new_end_date: iso(sql`end_date`) },
        from: sql`FROM adv WHERE status = 'done'`,
      })})
      SELECT status, total,
        set_config('synchronous_commit', CASE WHEN status = 'done' THEN 'on' ELSE 'off' END, true) AS sync
      FROM adv`);
    const row = rowsOf<BulkExtendProgress & { sync: string }>(result)[0];
    return row ? { status: row.status, total: row.total } : this.progress(job.id);
  }

  /** The job's state as recorded. */
  async progress(jobId: string): Promise<BulkExtendProgress> {
    const result = await this.db.execute(sql`SELECT status, total FROM bulk_extend_jobs WHERE id = ${jobId}`);
    const row = rowsOf<BulkExtendProgress>(result)[0];
    if (!row) throw new Error(`bulk extend job ${jobId} not found`);
    return row;
  }

  /**
   * Claims the running jobs whose last batch is older than `staleMs` (their runner is gone: a
   * crash, a restart, a call whose batch failed), bumping their heartbeat so that another resumer
   * polling meanwhile leaves them alone. Also forgets jobs finished more than `keepMs` ago.
   */
  async claimStale(staleMs: number, keepMs: number): Promise<BulkExtendJob[]> {
    await this.db.execute(sql`
      DELETE FROM bulk_extend_jobs
      WHERE status <> 'running' AND finished_at < now() - make_interval(secs => ${keepMs / 1000})`);
    const result = await this.db.execute(sql`
      UPDATE bulk_extend_jobs SET heartbeat_at = now()
      WHERE id IN (
        SELECT id FROM bulk_extend_jobs
        WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => ${staleMs / 1000})
        FOR UPDATE SKIP LOCKED)
      RETURNING id, project_id`);
    return rowsOf<{ id: string; project_id: string }>(result).map((r) => ({ id: r.id, projectId: r.project_id }));
  }
}
