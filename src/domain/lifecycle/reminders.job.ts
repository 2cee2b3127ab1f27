import type { Logger } from 'pino';
import { LoopJob, WakeLoop } from '../../wake-loop.js';
import type { Clock } from '../clock.js';
import type { RemindersStore } from '../../store/reminders.store.js';
import { REMINDER_LANES } from './reminder-rules.js';

/** The scan's statements (src/store/reminders.store.ts). */
export type ReminderStatements = Pick<RemindersStore, 'offsets' | 'writeDue'>;

export interface RemindersJobOptions {
  /** How often a pass looks for reminders whose instant has come: a reminder is at most this late. */
  intervalMs: number;
  batchSize: number;
}

export const DEFAULT_REMINDERS_OPTIONS: RemindersJobOptions = { intervalMs: 5_000, batchSize: 5_000 };

/**
 * Reminders before a membership ends (docs/lifecycle.md): every `intervalMs`, for each offset in
 * use, writes the reminders whose instant (end date − offset) has come, batch after batch, each
 * batch one transaction with its events and the messages the confirmations job then sends
 * (src/domain/front-desk/confirmations.ts, kind `reminder`). A pass after an outage catches up on
 * everything it missed, for memberships still active.
 */
export class RemindersJob extends LoopJob {
  protected readonly loop: WakeLoop;

  constructor(
    private readonly store: ReminderStatements,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: RemindersJobOptions = DEFAULT_REMINDERS_OPTIONS,
  ) {
    super();
    this.loop = new WakeLoop(
      async () => {
        const n = await this.passOnce();
        if (n > 0) this.logger.info({ reminders: n }, 'reminders written');
      },
      (err) => this.logger.error({ err }, 'reminders: a pass failed; the next one catches up'),
      options.intervalMs,
    );
  }

  /**
   * One pass: every offset drained up to now, its lanes side by side (a batch each in flight, each
   * its own transaction). Which reminder of a membership is the nearest is decided row by row, so
   * the order of the offsets and lanes changes nothing.
   */
  async passOnce(): Promise<number> {
    let written = 0;
    const drain = async (offset: string, lane: number) => {
      for (;;) {
        const batch = await this.store.writeDue(offset, lane, this.clock.now(), this.options.batchSize);
        written += batch.written;
        if (batch.scanned < this.options.batchSize || this.loop.isStopped) break;
      }
    };
    for (const offset of await this.store.offsets(this.clock.now())) {
      await Promise.all(Array.from({ length: REMINDER_LANES }, (_, lane) => drain(offset, lane)));
      if (this.loop.isStopped) break;
    }
    return written;
  }
}
