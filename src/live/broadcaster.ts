import type { Logger } from 'pino';
import type { TenureEvent } from '../domain/events.js';
import type { LiveEventsStore } from '../store/live-events.store.js';

/**
 * Broadcasts each committed event once, cluster-wide. Every node runs one; it is woken by the
 * `events` wake-up (src/store/wakeups.ts: after the commit of events written by any process, at
 * most once per 25 ms) and by a slow safety poll, claims unbroadcast rows with SKIP LOCKED (LiveEventsStore.claim), hands them
 * to `emit` and marks them, in one transaction. With the Redis adapter, `emit` reaches the
 * sockets of every node, so whichever node claims an event, every subscriber gets it once.
 */

const BATCH = 500;

export interface BroadcasterOptions {
  /** The safety poll: a missed notification (a reconnecting LISTEN) costs at most this long. */
  pollMs: number;
}

export class Broadcaster {
  private pending = false;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly store: LiveEventsStore,
    private readonly emit: (event: TenureEvent) => void,
    private readonly logger: Logger,
    private readonly options: BroadcasterOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Claims and broadcasts until nothing is left; wake-ups during a pass cause one more pass. */
  wake(): void {
    if (this.stopped) return;
    this.pending = true;
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      this.pending = false;
      try {
        while (!this.stopped && (await this.store.claim(BATCH, (events) => events.forEach(this.emit))) === BATCH);
      } catch (err) {
        // The rows stay unclaimed: the next wake-up or poll tries again.
        this.logger.warn({ err }, 'live-update broadcast failed; retrying on the next wake-up');
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
