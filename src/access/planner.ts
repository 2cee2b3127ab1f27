import type { Logger } from 'pino';
import type { AccessPlanStore } from '../store/access-plan.store.js';
import { LoopJob, WakeLoop } from '../wake-loop.js';

/**
 * Turns committed changes into desired access (docs/access-planning.md, "Desired state: what each change
 * does"). Every worker runtime runs one (in-process on embedded storage, `npx tenure worker` in
 * the scaled topology); it is woken by the `events` wake-up (src/database/wakeups.ts: after the commit
 * of events written by any process, at most once per 25 ms) and by a slow safety poll, and plans
 * batches of unplanned events (AccessPlanStore.planBatch) until none is left. The store's lock
 * makes the planners of a cluster take turns, each event planned once; the access rows it writes
 * wake the access workers after commit. At start and on each poll it also finishes whole-project
 * re-plans a crash interrupted (AccessPlanStore.resume).
 */

export const PLAN_BATCH = 1_000;
/** Embedded storage serves the API on the same one connection: batches of about 150 ms there. */
export const EMBEDDED_PLAN_BATCH = 500;
export const PLAN_POLL_MS = 5_000;
/** A whole-project re-plan whose progress has not moved for this long has lost its planner. */
export const PLAN_RESUME_STALE_MS = 30_000;

export interface AccessPlannerOptions {
  /** The safety poll: a missed wake-up (a reconnecting LISTEN) costs at most this long. */
  pollMs: number;
  /** Events per transaction. */
  batchSize: number;
  /** How long an interrupted whole-project re-plan waits before another planner finishes it. */
  resumeStaleMs?: number;
}

/** Plans until nothing is left; wake-ups during a pass cause one more pass. */
export class AccessPlanner extends LoopJob {
  protected readonly loop: WakeLoop;

  constructor(
    private readonly store: Pick<AccessPlanStore, 'planBatch' | 'resume'>,
    logger: Logger,
    private readonly options: AccessPlannerOptions = { pollMs: PLAN_POLL_MS, batchSize: PLAN_BATCH },
  ) {
    super();
    // The events stay unplanned (the batch rolled back): the next wake-up or poll tries again.
    this.loop = new WakeLoop((polled) => this.plan(polled), (err) => logger.warn({ err }, 'access planning failed; retrying on the next wake-up'), options.pollMs);
  }


  /** A pass: on a poll (the first pass included), interrupted whole-project re-plans first; then batches until a short one. */
  private async plan(polled: boolean): Promise<void> {
    if (polled) await this.store.resume(this.options.resumeStaleMs ?? PLAN_RESUME_STALE_MS);
    while (!this.loop.isStopped && (await this.store.planBatch(this.options.batchSize)).events === this.options.batchSize);
  }
}
