import type { Logger } from 'pino';
import type { TenureEvent } from '../domain/events.js';
import type { LiveEventsStore } from '../store/live-events.store.js';
import { WakeLoop } from '../wake-loop.js';

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
  /**
   * Whether `emit` could reach anyone now; while it cannot, events are marked broadcast without
   * being rendered (LiveEventsStore.claim). Default: always.
   */
  audience?: () => boolean;
}

export class Broadcaster {
  private readonly loop: WakeLoop;
  private readonly audience: () => boolean;

  constructor(
    private readonly store: LiveEventsStore,
    private readonly emit: (event: TenureEvent) => void,
    logger: Logger,
    options: BroadcasterOptions,
  ) {
    this.audience = options.audience ?? (() => true);
    // The rows stay unclaimed: the next wake-up or poll tries again.
    this.loop = new WakeLoop(() => this.broadcast(), (err) => logger.warn({ err }, 'live-update broadcast failed; retrying on the next wake-up'), options.pollMs);
  }

  start(): void {
    this.loop.start();
  }

  /** Claims and broadcasts until nothing is left; wake-ups during a pass cause one more pass. */
  wake(): void {
    this.loop.wake();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async broadcast(): Promise<void> {
    while (!this.loop.isStopped && (await this.store.claim(BATCH, (events) => events.forEach(this.emit), this.audience)) === BATCH);
  }
}
