/**
 * What the bulk extend's use case (MembershipsService, docs/memberships.md "Bulk extend") needs
 * of storage: the statements of a job, each one statement (or one fact), none deciding anything.
 * Which statements run in which transaction, and what follows from what they answer (the last
 * batch, a job superseded or finished by another runner, a stale runner), is the service's.
 * src/store/bulk-extend.store.ts implements them.
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

/** What one batch's statement did. */
export interface BatchSet {
  /** Memberships the batch set (those of its range the job covers). */
  set: number;
  /**
   * The last user_id of a full batch (`batchSize` memberships after the cursor): the next cursor.
   * Null when fewer were left: the batch ran to the end of the project.
   */
  fullUpTo: string | null;
}

/** The statements of a bulk extend job; the ones a use case groups run in its transaction. */
export interface BulkExtendStatements {
  /** Takes the project's turn among starts of bulk extends (its row locked until the commit). */
  lockProject(projectId: string): Promise<void>;
  /**
   * Marks the project's running job, if any, superseded, counting in its total every membership
   * it covered, with its event: the two are one fact, written together.
   */
  supersedeRunning(projectId: string): Promise<void>;
  /** Records a new running job of the project to `endDate`, its boundary the transaction's start. */
  insertJob(projectId: string, endDate: Date): Promise<BulkExtendJob>;
  /** Locks the job's row (runners of one job take turns) and reads its state. */
  lockJob(jobId: string): Promise<BulkExtendProgress>;
  /** Sets the next batch of up to `batchSize` memberships after the job's cursor. */
  setBatch(job: BulkExtendJob, batchSize: number): Promise<BatchSet>;
  /** Records a batch's progress: the new cursor and total (committed without waiting for the WAL). */
  advance(jobId: string, cursor: string, total: number): Promise<void>;
  /** Marks the job done with its total and writes its event: one fact. */
  finish(jobId: string, total: number): Promise<void>;
  /** Deletes the jobs that finished more than `keepMs` ago. */
  forgetFinished(keepMs: number): Promise<void>;
  /**
   * The running jobs without a batch for `staleMs`, their heartbeat bumped so that another
   * resumer polling meanwhile leaves them alone.
   */
  claimStale(staleMs: number): Promise<BulkExtendJob[]>;
}
