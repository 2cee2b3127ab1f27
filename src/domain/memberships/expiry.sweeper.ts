import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ExpiryStore } from '../../store/expiry.store.js';

/**
 * Marks memberships whose end date has passed as expired, with their `membership.expired`
 * events (src/store/expiry.store.ts says why each expiry is announced exactly once across
 * nodes). Runs every `intervalMs`, in batches, so one sweep never holds many row locks.
 */

export interface ExpirySweeperOptions {
  intervalMs: number;
  batchSize: number;
}

export class ExpirySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly store: ExpiryStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ExpirySweeperOptions,
  ) {}

  /** One sweep: expires everything due now, batch after batch. Returns how many expired. */
  async sweepOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.store.expireDue(this.clock.now(), this.options.batchSize);
      total += n;
      if (n < this.options.batchSize) return total;
    }
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweepOnce()
        .then((n) => {
          if (n > 0) this.logger.info({ expired: n }, 'expired memberships');
        })
        .catch((err: unknown) => this.logger.error({ err }, 'expiry sweep failed'))
        .finally(() => this.schedule(this.options.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
