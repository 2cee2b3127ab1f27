import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * Bulk extends (`PATCH /memberships/extend`) as durable jobs, run in short batches so that no
 * member's row stays locked for the length of the whole call (src/store/bulk-extend.store.ts).
 * A row is written when the call starts and records how far it got, so a job a crash left
 * unfinished is finished by the worker runtime.
 */
export const bulkExtendJobs = pgTable(
  'bulk_extend_jobs',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The end date every covered membership gets. */
    endDate: tz('end_date').notNull(),
    /**
     * The snapshot boundary: the job covers the project's memberships created at or before this
     * instant (the start of the call); the ones created later keep the end date they were given.
     */
    boundary: tz('boundary').notNull().defaultNow(),
    /**
     * The keyset cursor: memberships are taken in user_id order (the index
     * `memberships_project_user_key`), and every one up to this user_id has been set. It starts
     * below every user_id.
     */
    cursorUserId: text('cursor_user_id').notNull().default(''),
    /** Memberships set so far; when finished, the call's `total` (and its event's). */
    total: integer('total').notNull().default(0),
    /** `running` | `done` | `superseded` (a later bulk extend of the project took over). */
    status: text('status').notNull().default('running'),
    /** Bumped by every batch: a running job whose heartbeat is old has lost its runner. */
    heartbeatAt: tz('heartbeat_at').notNull().defaultNow(),
    finishedAt: tz('finished_at'),
  },
  (t) => [
    // One running job per project: a new call supersedes the running one in the same transaction.
    uniqueIndex('bulk_extend_jobs_running_key').on(t.projectId).where(sql`status = 'running'`),
    // The resume scan and the pruning of finished jobs.
    index('bulk_extend_jobs_status_idx').on(t.status, t.heartbeatAt),
  ],
);
