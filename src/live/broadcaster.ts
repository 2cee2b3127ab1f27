import type { Logger } from 'pino';
import type { TenureEvent } from '../domain/events.js';
import type { LiveEventsStore } from '../store/live-events.store.js';
import { WakeLoop } from '../wake-loop.js';

/** What the broadcaster needs of the outbox: claims of unbroadcast events (LiveEventsStore.claim). */
export type EventClaims = Pick<LiveEventsStore, 'claim'>;

/**
 * Broadcasts each committed event once, cluster-wide. Every node runs one; it is woken by the
 * `events` wake-up (src/database/wakeups.ts: after the commit of events written by any process, at
 * most once per 25 ms) and by a slow safety poll, claims unbroadcast rows with SKIP LOCKED (LiveEventsStore.claim), hands them
 * to `emit` and marks them, in one transaction. With the Redis adapter, `emit` reaches the
 * sockets of every node, so whichever node claims an event, every subscriber gets it once.
 */

const BATCH = 500;

/**
 * With nobody to emit to (`audience` false) the events are only marked, and a wake-up waits this
 * long first, so one statement marks what a quarter of a second of writes committed instead of a
 * statement every 25 ms (src/database/wakeups.ts). On embedded storage each statement is a turn on
 * the one connection the API's requests wait for: marking on every wake-up cost the full server
 * ~10% of its extends a second on PGlite (side by side, 10 connections: ~495 → ~548 req/s). The
 * price: a longer statement on that connection every quarter second (the ten-endpoint webhook
 * p99 on PGlite 36 → 47-57 ms, bench/RESULTS.md). A socket that connects meanwhile gets the events
 * the next claim emits, as after any wake-up; the first write after it subscribes wakes the
 * broadcaster at once.
 */
export const UNHEARD_MARK_MS = 250;

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
  private deferred: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: EventClaims,
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

  /**
   * Claims and broadcasts until nothing is left; wake-ups during a pass cause one more pass. With
   * no audience, after UNHEARD_MARK_MS (one deferred pass however many wake-ups come meanwhile).
   */
  wake(): void {
    if (this.audience()) {
      this.loop.wake();
      return;
    }
    this.deferred ??= setTimeout(() => {
      this.deferred = null;
      this.loop.wake();
    }, UNHEARD_MARK_MS);
  }

  stop(): Promise<void> {
    if (this.deferred) clearTimeout(this.deferred);
    this.deferred = null;
    return this.loop.stop();
  }

  private async broadcast(): Promise<void> {
    while (!this.loop.isStopped && (await this.store.claim(BATCH, (events) => events.forEach(this.emit), this.audience)) === BATCH);
  }
}
