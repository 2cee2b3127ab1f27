import type { AccessError, ClaimedAccess } from '../store/access-worker.store.js';
import type { Platform } from '../domain/targets/target.view.js';

/**
 * What a platform brings to the access engine (src/access/README.md): the engine (leases, claims,
 * one call per target at a time, outcomes and their events) is the same for every platform; a
 * connector says how a bot's client is built and what one access row's change is on its platform.
 * `discord/discord.connector.ts` and `telegram/telegram.connector.ts` are the two.
 */

/** What one row's call came to. */
export type CallResult =
  | { outcome: 'applied' }
  | { outcome: 'unchanged' }
  | { outcome: 'aborted' }
  | { outcome: 'failed'; error: AccessError; targetFault: boolean }
  | { outcome: 'waiting_for_member'; error: AccessError }
  /** A passing failure; `retryAfterMs` when the platform said when to come back (Telegram's `retry_after`). */
  | { outcome: 'retry'; error: AccessError; retryAfterMs?: number }
  | { outcome: 'unauthorized'; error: AccessError };

/** The bot a client belongs to, as its lease names it. */
export interface BotIdentity {
  readonly projectId: string;
  /** The bot's own user id on the platform. */
  readonly botId: string;
}

/** A request the client holds back until its rate-limit bucket has room (Discord's `rateLimited`). */
export interface BucketWait {
  /** The whole bot is limited, not one bucket. */
  global: boolean;
  /** The bucket's top-level resource: the guild (or chat) its calls are made in. */
  majorParameter: string;
  /** Milliseconds until the bucket has room. */
  timeToReset: number;
  url: string;
}

export interface PlatformConnector<C> {
  readonly platform: Platform;
  /** The platform's name in logs and messages (`Discord`). */
  readonly label: string;
  /**
   * Hold every connected bot, not only those with due rows: a Telegram bot held is the one that
   * receives the bot's updates, and must be held for them to arrive.
   */
  readonly holdAlways: boolean;
  /**
   * Loads the platform's client library (src/lazy-library.ts), once: the worker awaits it before
   * it builds its first client, so a server that never holds a bot of the platform never loads it.
   */
  load(): Promise<void>;
  /** The client of one bot, built when its lease is taken and again when it is reconnected (after `load`). */
  createClient(token: string, bot: BotIdentity): C;
  /** Stops the client's timers and listeners; requests still queued in it finish or fail on their own. */
  closeClient(client: C): void;
  /** Makes the change `row` needs with the bot's client and says what it came to; never throws. */
  apply(client: C, row: ClaimedAccess, signal: AbortSignal, bot: BotIdentity): Promise<CallResult>;
  /** The path of the request `row` needs, to tell which call a bucket wait is about; null when none. */
  pathOf(row: ClaimedAccess): string | null;
  /** Listens to the client's bucket waits, where the client reports them (Discord). */
  onBucketWait?(client: C, listener: (wait: BucketWait) => void): void;
}
