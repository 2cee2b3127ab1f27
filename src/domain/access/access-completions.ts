import type { AccessError, Desired } from '../../store/access-worker.store.js';
import type { IntegrationKey } from '../../store/bot-leases.store.js';
import type { Transactor } from '../transactions.js';

/**
 * Recording the access engine's platform calls (src/access/README.md, "A raced call records the
 * truth"): what each call's end means for its row, its target and its bot, decided here; written
 * by a batch of one bot's outcomes at a time, in one transaction, fenced by the bot's lease.
 */

/** `target_id:user_id`: an access row's key among a batch's. */
export const accessKey = (targetId: string, userId: string): string => `${targetId}:${userId}`;

/**
 * How one call ended:
 * - `applied`: the platform now holds `desired` (granted or revoked);
 * - `unchanged`: nothing to call (a revoke where `on_expiry` is `none`): synced, no event;
 * - `failed`: no retry until the target or the connection changes; with `targetFault` the target
 *   itself is at fault (50013, 10011, 10004…): it is flagged unhealthy and its other pending rows
 *   fail too, without a call;
 * - `waiting_for_member`: the member is not in the guild (10007);
 * - `retry`: a passing failure (network, timeout, 5xx), tried again at `nextAttemptAt`;
 * - `unauthorized`: the token was refused (401): the bot is flagged unhealthy, the row stays
 *   pending, due again once the bot is reconnected.
 */
export type AccessCompletion = {
  targetId: string;
  userId: string;
  /** The `desired` the call was made for (as claimed). */
  desired: Desired;
} & (
  | { outcome: 'applied' | 'unchanged' }
  | { outcome: 'failed'; error: AccessError; targetFault: boolean }
  | { outcome: 'waiting_for_member' | 'unauthorized'; error: AccessError }
  | { outcome: 'retry'; error: AccessError; nextAttemptAt: Date }
);

export interface CompleteResult {
  /** `accessKey`s of the rows the batch wrote (a row whose `desired` changed meanwhile included, when the call succeeded). */
  recorded: Set<string>;
  /** Other pending rows of faulted targets, failed without a call. */
  cascaded: number;
  /** Targets flagged unhealthy by this batch. */
  unhealthyTargets: string[];
  /** False when the lease was no longer held: nothing was written. */
  held: boolean;
}

/** The event that settles a row: written only when the row still wants what the call did. */
export type SettlingEvent = 'access.granted' | 'access.revoked' | 'access.failed';

/**
 * What one outcome writes to its row, as decided from the call alone. It is written while the row
 * still wants what the call was made for (its `desired` unchanged) and is still pending; a call
 * that `succeeded` is recorded whatever the row wants now, since the platform holds what it did
 * (the statement then leaves the row to be called again for its new `desired`).
 */
export interface OutcomeWrite {
  targetId: string;
  userId: string;
  /** The `desired` the call was made for. */
  desired: Desired;
  /** The platform did what was asked. */
  succeeded: boolean;
  state: 'synced' | 'failed' | 'waiting_for_member' | 'pending';
  /** What the platform holds now; null: as it was. */
  applied: Desired | null;
  /** The row's `last_error`: null once the call settled it. */
  error: AccessError | null;
  /** `synced_at` becomes now. */
  synced: boolean;
  /** When the row is due again; null: as it was. */
  nextAttemptAt: Date | null;
  event: SettlingEvent | null;
}

/** A target the platform blamed: flagged unhealthy with `error`, its other pending rows failed with it. */
export interface TargetFault {
  targetId: string;
  error: AccessError;
}

export interface SettledBatch {
  writes: OutcomeWrite[];
  /** One a blamed target, with the error of its first member's call (by user id). */
  faults: TargetFault[];
  /** The platform refused the bot's token: the bot is flagged unhealthy with this error. */
  refusal: AccessError | null;
}

/** Only the code and message reach a row, a target or an event, whatever else an error carries. */
const plain = (e: AccessError): AccessError => ({ code: e.code, message: e.message });

/**
 * What a batch of one bot's outcomes writes. A retry of a target another call of the batch blamed
 * fails with that target's error: a call again would fail the same way.
 */
export function settleCompletions(batch: readonly AccessCompletion[], now: Date): SettledBatch {
  const blamed = new Map<string, { userId: string; error: AccessError }>();
  for (const c of batch) {
    if (c.outcome !== 'failed' || !c.targetFault) continue;
    const first = blamed.get(c.targetId);
    if (!first || c.userId < first.userId) blamed.set(c.targetId, { userId: c.userId, error: plain(c.error) });
  }
  const refused = batch.find((c) => c.outcome === 'unauthorized');
  const writes = batch.map((c): OutcomeWrite => {
    const base = { targetId: c.targetId, userId: c.userId, desired: c.desired, succeeded: false, applied: null, synced: false, nextAttemptAt: null, event: null };
    switch (c.outcome) {
      case 'applied':
        return { ...base, succeeded: true, state: 'synced', applied: c.desired, error: null, synced: true, event: c.desired === 'granted' ? 'access.granted' : 'access.revoked' };
      case 'unchanged':
        return { ...base, state: 'synced', error: null, synced: true };
      case 'failed':
        return { ...base, state: 'failed', error: plain(c.error), event: 'access.failed' };
      case 'waiting_for_member':
        return { ...base, state: 'waiting_for_member', applied: 'revoked', error: plain(c.error) };
      case 'unauthorized':
        // Due at once: the bot is not taken again until it is reconnected.
        return { ...base, state: 'pending', error: plain(c.error), nextAttemptAt: now };
      case 'retry': {
        const fault = blamed.get(c.targetId);
        if (fault) return { ...base, state: 'failed', error: fault.error, event: 'access.failed' };
        return { ...base, state: 'pending', error: plain(c.error), nextAttemptAt: c.nextAttemptAt };
      }
    }
  });
  return {
    writes,
    faults: [...blamed].map(([targetId, f]) => ({ targetId, error: f.error })),
    refusal: refused && 'error' in refused ? plain(refused.error) : null,
  };
}

/** The statements recording a batch (src/store/access-worker.store.ts), each fenced by the bot's lease. */
export interface AccessCompletionStatements {
  /**
   * Writes each outcome to its row, with the events of the rows it settles, while `owner` holds the
   * bot's lease at `now`; `generation` is the lease's (null: not held, nothing written) and
   * `recorded` the `accessKey`s of the rows written.
   */
  recordOutcomes(owner: string, key: IntegrationKey, now: Date, writes: readonly OutcomeWrite[]): Promise<{ generation: number | null; recorded: string[] }>;
  /**
   * Flags these targets unhealthy and fails their pending rows but `spared` (`accessKey`s) with the
   * target's error and `access.failed` each, as of lease `generation`.
   */
  failTargets(projectId: string, generation: number, faults: readonly TargetFault[], spared: readonly string[]): Promise<{ flagged: string[]; cascaded: number }>;
  /** Flags the bot unhealthy with `error` while `owner` holds its lease at `now`. */
  flagRefusedBot(owner: string, key: IntegrationKey, now: Date, error: AccessError): Promise<void>;
}

/**
 * Records a batch of one bot's call outcomes in one transaction: the rows, then the targets the
 * batch blamed (their other pending rows failed without a call), then a refused token. Nothing
 * is written unless `owner` still holds the bot's lease at `now` (the app clock), so a worker
 * that stalled past its lease and was taken over writes nothing. Batches, not outcomes, cost
 * statements: a batch with no blame and no refusal is one statement.
 */
export class AccessCompletions {
  constructor(private readonly transactor: Transactor<{ accessWorker: AccessCompletionStatements }>) {}

  async record(owner: string, key: IntegrationKey, now: Date, batch: readonly AccessCompletion[]): Promise<CompleteResult> {
    if (batch.length === 0) return { recorded: new Set(), cascaded: 0, unhealthyTargets: [], held: true };
    const { writes, faults, refusal } = settleCompletions(batch, now);
    return this.transactor.run(async ({ accessWorker }) => {
      const { generation, recorded } = await accessWorker.recordOutcomes(owner, key, now, writes);
      if (generation === null) return { recorded: new Set(), cascaded: 0, unhealthyTargets: [], held: false };
      // The rows the batch wrote are settled by their own call (a raced success stays pending for its new desired).
      const failed = faults.length > 0 ? await accessWorker.failTargets(key.projectId, generation, faults, recorded) : { flagged: [], cascaded: 0 };
      if (refusal) await accessWorker.flagRefusedBot(owner, key, now, refusal);
      return { recorded: new Set(recorded), cascaded: failed.cascaded, unhealthyTargets: failed.flagged, held: true };
    });
  }
}
