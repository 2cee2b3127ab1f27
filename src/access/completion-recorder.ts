import type { AccessCompletion, AccessCompletions, CompleteResult } from '../domain/access/access-completions.js';
import type { Clock } from '../domain/clock.js';
import { GroupCommit } from '../group-commit.js';
import type { ClaimedAccess } from '../store/access-worker.store.js';
import type { IntegrationKey } from '../store/bot-leases.store.js';
import type { CallResult } from './connector.js';
import { nextAccessAttemptAt } from './retry-schedule.js';

/** Outcomes written per transaction at most. */
const RECORD_BATCH = 500;

/** What the recorder needs to write a batch: the use case recording it (src/domain/access/access-completions.ts). */
export type CompletionWriter = Pick<AccessCompletions, 'record'>;

/**
 * Writes one bot's call outcomes with group commit (src/group-commit.ts), as the webhook worker's
 * AttemptRecorder does: outcomes that arrive while a write is under way go together in the next
 * one, one transaction per batch (AccessCompletions.record, its events included), with no timer,
 * so an idle worker adds no latency and a burst of thousands costs a few dozen transactions. `record` resolves once the
 * outcome's batch is written (with whether the lease was still held), or rejects when the write
 * failed: the row keeps its claim, falls due again when the claim runs out, and is called again
 * (at least once).
 */
export class CompletionRecorder {
  private readonly batches: GroupCommit<AccessCompletion, CompleteResult>;

  constructor(writer: CompletionWriter, owner: string, key: IntegrationKey, clock: Clock) {
    this.batches = new GroupCommit(RECORD_BATCH, (completions) => writer.record(owner, key, clock.now(), completions));
  }

  record(completion: AccessCompletion): Promise<CompleteResult> {
    return this.batches.add(completion);
  }

  /** Outcomes handed in and not written yet (waiting, or in the write under way): what a crash now would call again. */
  get unwritten(): number {
    return this.batches.unwritten;
  }

  /** Resolves once everything handed in so far is written (or failed). */
  flush(): Promise<void> {
    return this.batches.flush();
  }
}

/** What a call's result writes to its row (a retry is due when the platform said, else on the schedule from `now`). */
export function completionOf(row: ClaimedAccess, result: Exclude<CallResult, { outcome: 'aborted' }>, now: Date, random: () => number): AccessCompletion {
  const base = { targetId: row.targetId, userId: row.userId, desired: row.desired };
  switch (result.outcome) {
    case 'applied':
    case 'unchanged':
      return { ...base, outcome: result.outcome };
    case 'failed':
      return { ...base, outcome: 'failed', error: result.error, targetFault: result.targetFault };
    case 'retry':
      return {
        ...base,
        outcome: 'retry',
        error: result.error,
        nextAttemptAt: result.retryAfterMs === undefined ? nextAccessAttemptAt(row.attempt, now, random) : new Date(now.getTime() + result.retryAfterMs),
      };
    case 'waiting_for_member':
    case 'unauthorized':
      return { ...base, outcome: result.outcome, error: result.error };
  }
}
