import { sql } from 'drizzle-orm';
import type {
  BatchSet,
  BulkExtendJob,
  BulkExtendProgress,
  BulkExtendStatements,
} from '../domain/memberships/bulk-extend.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { iso } from '../database/sql.js';

/**
 * Bulk extends as durable jobs (table `bulk_extend_jobs`, docs/memberships.md "Bulk extend"). One
 * UPDATE over every membership of a project would hold every member's row lock until it commits
 * (seconds at a million members), so a single extend of any member would wait for all of it.
 * Instead a job sets the memberships in batches taken in user_id order, the order of the unique
 * index `memberships_project_user_key`: each batch is its own short transaction that sets the
 * batch's rows and advances the job's cursor together, so a member's row is locked only while its
 * batch runs, and a crash loses at most a batch that then rolls back. The batch that finds fewer
 * than a batch left sets them, marks the job done and writes the call's one
 * `membership.bulk-extended` event in the same transaction: the event is written once, whoever
 * runs the last batch. The transactions and those decisions are MembershipsService's; here are
 * their statements (BulkExtendStatements). (Why user_id, one column, and not (created_at, id):
 * PostgreSQL before 18 stops a btree scan on the first column of a row comparison only, so the
 * upper bound `(created_at, id) <= (…)` of a batch of memberships sharing one created_at, as an
 * import makes them, did not end the scan: every batch read the rest of the project's index.)
 *
 * What a job covers: the memberships of the project created at or before its `boundary` (the
 * start of the call); one created later keeps the end date it was created with. A second bulk
 * extend of the project supersedes a running one (the later call wins): in the transaction that
 * records it, the running job is marked `superseded`, with its event, its total being every
 * membership it covered, as if it had finished just before the new call began; the new job then
 * sets every membership, those the old one had already set included.
 */

export class BulkExtendStore implements BulkExtendStatements {
  constructor(private readonly db: Db) {}

  // Its own statement, so that the next one's snapshot sees the job a start that held the lock
  // before this one committed. FOR NO KEY UPDATE does not conflict with the key-share locks of
  // inserted memberships.
  async lockProject(projectId: string): Promise<void> {
    await this.db.execute(sql`SELECT 1 FROM projects WHERE id = ${projectId} FOR NO KEY UPDATE`);
  }

  async supersedeRunning(projectId: string): Promise<void> {
    await this.db.execute(sql`
      WITH old AS (
        UPDATE bulk_extend_jobs j SET status = 'superseded', finished_at = now(), heartbeat_at = now(),
          total = j.total + (
            SELECT count(*)::int FROM memberships m
            WHERE m.project_id = j.project_id AND m.user_id > j.cursor_user_id AND m.created_at <= j.boundary)
        WHERE j.project_id = ${projectId} AND j.status = 'running'
        RETURNING j.project_id, j.total, j.end_date
      )
      ${insertEvent('membership.bulk-extended', {
        projectId: sql`project_id`,
        data: { total: sql<number>`total`, new_end_date: iso(sql`end_date`) },
        from: sql`FROM old`,
      })}`);
  }

  async insertJob(projectId: string, endDate: Date): Promise<BulkExtendJob> {
    const result = await this.db.execute(sql`
      INSERT INTO bulk_extend_jobs (project_id, end_date) VALUES (${projectId}, ${endDate}::timestamptz)
      RETURNING id, project_id`);
    const row = rowsOf<{ id: string; project_id: string }>(result)[0]!;
    return { id: row.id, projectId: row.project_id };
  }

  async lockJob(jobId: string): Promise<BulkExtendProgress> {
    const result = await this.db.execute(sql`SELECT status, total FROM bulk_extend_jobs WHERE id = ${jobId} FOR UPDATE`);
    const row = rowsOf<BulkExtendProgress>(result)[0];
    if (!row) throw new Error(`bulk extend job ${jobId} not found`);
    return row;
  }

  /**
   * The job's cursor, end date and boundary are read from its row through scalar subqueries
   * (evaluated once, before the scans), so that the memberships scans are plain index range
   * scans of memberships_project_user_key. A full batch ends at its last user_id; a short one, at
   * the project's greatest.
   */
  async setBatch(job: BulkExtendJob, batchSize: number): Promise<BatchSet> {
    const j = (column: string) => sql.raw(`(SELECT ${column} FROM job)`);
    const result = await this.db.execute(sql`
      WITH job AS MATERIALIZED (
        SELECT cursor_user_id, end_date, boundary FROM bulk_extend_jobs WHERE id = ${job.id}
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
      )
      SELECT (SELECT count(*)::int FROM upd) AS set, (SELECT user_id FROM last_key) AS full_up_to`);
    const row = rowsOf<{ set: number; full_up_to: string | null }>(result)[0]!;
    return { set: row.set, fullUpTo: row.full_up_to };
  }

  /**
   * The commit of a batch's progress need not wait for its WAL to reach the disk
   * (synchronous_commit off for this transaction only, set_config(…, true)): a crash can then
   * lose only batches whose cursor advance is lost with them, which the resume runs again, and
   * the batch's row locks are released sooner. `finish` commits durably, so the answer and its
   * event are never undone.
   */
  async advance(jobId: string, cursor: string, total: number): Promise<void> {
    await this.db.execute(sql`
      WITH adv AS (
        UPDATE bulk_extend_jobs SET cursor_user_id = ${cursor}, total = ${total}, heartbeat_at = now()
        WHERE id = ${jobId} RETURNING 1
      )
      SELECT set_config('synchronous_commit', 'off', true) FROM adv`);
  }

  async finish(jobId: string, total: number): Promise<void> {
    await this.db.execute(sql`
      WITH done AS (
        UPDATE bulk_extend_jobs SET status = 'done', total = ${total}, finished_at = now(), heartbeat_at = now()
        WHERE id = ${jobId}
        RETURNING project_id, total, end_date
      )
      ${insertEvent('membership.bulk-extended', {
        projectId: sql`project_id`,
        data: { total: sql<number>`total`, new_end_date: iso(sql`end_date`) },
        from: sql`FROM done`,
      })}`);
  }

  /** The job's state as recorded. */
  async progress(jobId: string): Promise<BulkExtendProgress> {
    const result = await this.db.execute(sql`SELECT status, total FROM bulk_extend_jobs WHERE id = ${jobId}`);
    const row = rowsOf<BulkExtendProgress>(result)[0];
    if (!row) throw new Error(`bulk extend job ${jobId} not found`);
    return row;
  }

  async forgetFinished(keepMs: number): Promise<void> {
    await this.db.execute(sql`
      DELETE FROM bulk_extend_jobs
      WHERE status <> 'running' AND finished_at < now() - make_interval(secs => ${keepMs / 1000})`);
  }

  async claimStale(staleMs: number): Promise<BulkExtendJob[]> {
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
