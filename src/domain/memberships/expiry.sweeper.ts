import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ExpiryStore } from '../../store/expiry.store.js';
import { WakeLoop } from '../../wake-loop.js';

/** The sweep's one statement (src/store/expiry.store.ts). */
export type ExpiryStatements = Pick<ExpiryStore, 'expireDue'>;

/**
 * Writes the `membership.expired` event of every membership whose end date has passed
 * (src/store/expiry.store.ts says why each expiry is announced exactly once across nodes).
 * Readers do not wait for it: a membership reads expired from its end date on (docs/memberships.md).
 *
 * A sweep drains everything due: a full batch is followed at once by the next, and `lanes`
 * batches run side by side (they claim disjoint rows), so a backlog of 200,000 expiries at one
 * instant is written at the database's pace; a sweep starts every `intervalMs` (src/wake-loop.ts:
 * at once on start, then on each tick; a tick during a long sweep makes one more sweep after it).
 * Batches bound how many row locks one transaction holds.
 */

/** Batches in flight at once unless the options say otherwise (see `lanes`). */
export const DEFAULT_SWEEP_LANES = 2;

export interface ExpirySweeperOptions {
  intervalMs: number;
  batchSize: number;
  /**
   * Batches in flight at once (DEFAULT_SWEEP_LANES): on PostgreSQL the database works on one batch while
   * the other commits; on PGlite (one connection) they simply take turns.
   */
  lanes?: number;
}

export class ExpirySweeper {
  private readonly loop: WakeLoop;

  constructor(
    private readonly store: ExpiryStatements,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ExpirySweeperOptions,
  ) {
    this.loop = new WakeLoop(
      async () => {
        const n = await this.sweepOnce();
        if (n > 0) this.logger.info({ expired: n }, 'expired memberships');
      },
      (err) => this.logger.error({ err }, 'expiry sweep failed'),
      options.intervalMs,
    );
  }

  /** One sweep: expires everything due now, batch after batch. Returns how many expired. */
  async sweepOnce(): Promise<number> {
    const lane = async () => {
      let total = 0;
      for (;;) {
        const n = await this.store.expireDue(this.clock.now(), this.options.batchSize);
        total += n;
        // A short batch: nothing left that this lane could claim (what another lane holds, it writes).
        // Stopping: the sweep ends after its batches in flight instead of draining the backlog.
        if (n < this.options.batchSize || this.loop.isStopped) return total;
      }
    };
    const counts = await Promise.all(Array.from({ length: Math.max(1, this.options.lanes ?? DEFAULT_SWEEP_LANES) }, lane));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Sweeps now, then every `intervalMs`. */
  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
