import type { MembershipsStore } from '../../store/memberships.store.js';
import type { ListKey } from '../../store/keyset.js';
import type { MembershipFilter } from '../../store/membership-queries.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { parseFutureInstant } from '../instant.js';
import type { Transactor } from '../transactions.js';
import type { BulkExtendJob, BulkExtendProgress, BulkExtendStatements } from './bulk-extend.js';
import type { MembershipView } from './membership.view.js';

export interface EndDateSet {
  total: number;
  newEndDate: Date;
}

const err = <T>(e: AppError): Result<T> => ({ ok: false, error: e });

/**
 * Memberships set per batch of a bulk extend. A batch holds its members' row locks until it
 * commits, so a single extend of one of them waits at most that long: a thousand rows, the
 * analytics trigger included, commit in tens of milliseconds (5,000 held them ~230 ms: p99 212 ms
 * for single extends during a bulk), while a million members still take a thousand commits.
 */
export const BULK_EXTEND_BATCH = 1_000;
/** A running job without a batch for this long has lost its runner (a batch takes milliseconds). */
export const BULK_EXTEND_STALE_MS = 30_000;
/** Finished jobs are kept this long (a record of each call), then deleted. */
const BULK_EXTEND_KEEP_MS = 7 * 86_400_000;

/** The statements of one membership the service runs, each one statement with its event. */
export type MembershipStatements = Pick<MembershipsStore, 'extendOne' | 'create' | 'get' | 'list' | 'listAfter' | 'delete' | 'planExists'>;

/** The stores a bulk extend's transaction uses. */
export interface BulkExtendStores {
  bulkExtend: BulkExtendStatements;
}

/**
 * The rules of memberships. A change of one membership is one statement that writes its outbox
 * event too; a bulk extend is a job whose steps (a start, a batch) are transactions opened here.
 */
export class MembershipsService {
  constructor(
    private readonly store: MembershipStatements,
    private readonly clock: Clock,
    /** The transactions of a bulk extend's start and of each of its batches. */
    private readonly transactor: Transactor<BulkExtendStores>,
    /** A bulk extend's statements that run alone (the resume's claims). */
    private readonly bulk: BulkExtendStatements,
  ) {}

  /** Sets one user's end date (reactivating an expired membership). */
  async extendOne(projectId: string, userId: string, extend: unknown): Promise<Result<EndDateSet>> {
    const endDate = parseFutureInstant(extend, this.clock.now(), 'extend');
    if (endDate instanceof AppError) return err(endDate);
    const extended = await this.store.extendOne(projectId, userId, endDate);
    if (!extended) return fail('NOT_FOUND', `Membership not found for user ${userId}`);
    return ok({ total: 1, newEndDate: endDate });
  }

  /**
   * Sets the end date of every membership of the project (expired ones become active
   * again); `total` is how many. Runs as a job of short batches (docs/memberships.md, "Bulk
   * extend"):
   * the memberships created before the call are covered, one event is written when the last batch
   * commits, and a later call for the project supersedes this one (it then answers with every
   * membership it covered, as if it had finished just before the later call began). If the call
   * fails part way, the job stays recorded and `resumeBulkExtends` finishes it.
   */
  async extendAll(projectId: string, extend: unknown): Promise<Result<EndDateSet>> {
    const endDate = parseFutureInstant(extend, this.clock.now(), 'extend');
    if (endDate instanceof AppError) return err(endDate);
    const job = await this.startBulkExtend(projectId, endDate);
    const total = await this.runBulkExtend(job);
    return ok({ total, newEndDate: endDate });
  }

  /**
   * Records a bulk extend job; the project's running one, if any, is superseded (with its event)
   * in the same transaction: the later call wins. Starts of one project take turns on the
   * project's row, so one job a project runs at a time.
   */
  startBulkExtend(projectId: string, endDate: Date): Promise<BulkExtendJob> {
    return this.transactor.run(async ({ bulkExtend }) => {
      await bulkExtend.lockProject(projectId);
      await bulkExtend.supersedeRunning(projectId);
      return bulkExtend.insertJob(projectId, endDate);
    });
  }

  /**
   * Runs the job's next batch of up to `batchSize` memberships in one transaction: the job's row
   * locked (two runners of one job take turns, each from the cursor the other left), the batch
   * set, the cursor advanced; a batch shorter than `batchSize` is the last, which marks the job
   * done and writes its event. A job that is no longer running (done by another runner, or
   * superseded by a later call) is left as it is. Returns the job's state after.
   */
  runBulkExtendBatch(job: BulkExtendJob, batchSize = BULK_EXTEND_BATCH): Promise<BulkExtendProgress> {
    return this.transactor.run(async ({ bulkExtend }) => {
      const state = await bulkExtend.lockJob(job.id);
      if (state.status !== 'running') return state;
      const batch = await bulkExtend.setBatch(job, batchSize);
      const total = state.total + batch.set;
      if (batch.fullUpTo !== null) {
        await bulkExtend.advance(job.id, batch.fullUpTo, total);
        return { status: 'running', total };
      }
      await bulkExtend.finish(job.id, total);
      return { status: 'done', total };
    });
  }

  /**
   * Finishes the bulk extends whose runner is gone (a crash, a restart, a call that failed part
   * way): those running without a batch for `staleMs` (a batch takes milliseconds). The worker
   * runtime calls it at start and then periodically; it also forgets the jobs finished long ago.
   * Returns how many it finished.
   */
  async resumeBulkExtends(staleMs = BULK_EXTEND_STALE_MS): Promise<number> {
    await this.bulk.forgetFinished(BULK_EXTEND_KEEP_MS);
    const jobs = await this.bulk.claimStale(staleMs);
    for (const job of jobs) await this.runBulkExtend(job);
    return jobs.length;
  }

  /** Runs the job's batches until it is over (done here or by another runner, or superseded); its total. */
  private async runBulkExtend(job: BulkExtendJob): Promise<number> {
    for (;;) {
      const progress = await this.runBulkExtendBatch(job);
      if (progress.status !== 'running') return progress.total;
    }
  }

  async create(
    projectId: string,
    input: {
      user_id: string;
      end_date: unknown;
      plan_id?: string | null;
      user_name?: { first_name?: string | null; username?: string | null } | null;
    },
  ): Promise<Result<MembershipView>> {
    const endDate = parseFutureInstant(input.end_date, this.clock.now(), 'end_date');
    if (endDate instanceof AppError) return err(endDate);
    const planId = input.plan_id ?? null;
    if (planId && !(await this.store.planExists(projectId, planId))) return fail('NOT_FOUND', 'Plan not found');
    const created = await this.store.create(projectId, {
      userId: input.user_id,
      endDate,
      planId,
      ...(input.user_name ? { userName: input.user_name } : {}),
    });
    // A banned user (docs/api-keys-settings-users.md, "Bans") can get no new membership.
    if (created === 'banned') return fail('CONFLICT', `User ${input.user_id} is banned from this project`);
    if (created === 'exists') return fail('CONFLICT', `User ${input.user_id} already has a membership in this project`);
    return ok(created);
  }

  async get(projectId: string, membershipId: string): Promise<Result<MembershipView>> {
    const found = await this.store.get(projectId, membershipId);
    return found ? ok(found) : fail('NOT_FOUND', 'Membership not found');
  }

  list(projectId: string, filter: MembershipFilter) {
    return this.store.list(projectId, filter);
  }

  /** A cursor page: the memberships after `after` (null: from the start), without a total. */
  listAfter(projectId: string, filter: Omit<MembershipFilter, 'offset'>, after: ListKey | null) {
    return this.store.listAfter(projectId, filter, after);
  }

  async delete(projectId: string, membershipId: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, membershipId)) ? ok(null) : fail('NOT_FOUND', 'Membership not found');
  }
}
