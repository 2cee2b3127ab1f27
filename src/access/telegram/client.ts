import type { Api, ApiClientOptions } from 'grammy';
import { createTelegramApi } from './api.js';

/**
 * The access worker's client for one Telegram bot: the bot's grammY `Api` (createTelegramApi), with
 * its pace (docs/access-telegram.md). Telegram
 * publishes no limits for the methods tenure calls (its FAQ speaks of messages: about 30 a second
 * per bot, one a second per chat) and answers any call over its flood limits with 429 and
 * `retry_after`. So tenure paces itself below them: at most `perSecond` calls in any second per bot
 * (TENURE_TELEGRAM_PER_SECOND) and `chatPerSecond` in one chat (TENURE_TELEGRAM_CHAT_PER_SECOND).
 * A call waits for a slot in a grammY API transformer, before grammY's own timeout starts; the
 * 429s that still come are the connector's (the engine holds the chat back for `retry_after`).
 *
 * The pace is `Pace` below, a few lines of our own rather than a library: Bottleneck (what
 * @grammyjs/transformer-throttler uses) has had no release since 2019, and rate-limiter-flexible's
 * queue (a dependency already) can neither drop a waiting call when its AbortSignal fires nor be
 * stopped, and counts fixed windows, which let twice the limit through across a window's edge.
 *
 * Nothing here logs: the `Api` carries the token (api.ts).
 */
export type TelegramClient = Api;

export interface TelegramPaceOptions {
  /** Calls per second per bot, every chat together. */
  perSecond: number;
  /** Calls per second in one chat. */
  chatPerSecond: number;
}

/** The window both limits count in. */
const WINDOW_MS = 1000;

/**
 * Methods that are not paced: the long poll is the bot's intake of updates, not an action in a
 * chat, Telegram does not count it with them, and it must not queue behind a burst of calls.
 */
const UNPACED: ReadonlySet<string> = new Set(['getUpdates']);

/** A call refused because its client was closed (the bot let go or reconnected) while it waited. */
export class TelegramClientClosedError extends Error {
  constructor() {
    super('the Telegram client was closed while the call waited for its turn');
    this.name = 'TelegramClientClosed';
  }
}

/**
 * At most `perSecond` starts in any `WINDOW_MS` of one bot, and `chatPerSecond` in one chat: the
 * start times of the last calls are kept per key (a sliding window), and a call waits until the
 * oldest one that counts against it leaves the window. Waiters whose slot comes at once go in the
 * order their timers fire, which is the order they started waiting for equal waits.
 */
export class Pace {
  private readonly starts = new Map<string, number[]>();
  private readonly waiting = new Set<{ timer: NodeJS.Timeout; stop: (err: unknown) => void }>();
  private closed = false;

  constructor(
    private readonly options: TelegramPaceOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until a call in `chat` (null: no chat) may start; 0: now. */
  delay(chat: string | null, now = this.now()): number {
    let wait = this.waitOf('', this.options.perSecond, now);
    if (chat !== null) wait = Math.max(wait, this.waitOf(chat, this.options.chatPerSecond, now));
    return wait;
  }

  /** Waits for a slot and takes it; rejects when `signal` aborts or the pace is closed first. */
  async slot(chat: string | null, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.closed) throw new TelegramClientClosedError();
      signal?.throwIfAborted();
      const now = this.now();
      const wait = this.delay(chat, now);
      if (wait <= 0) {
        this.take('', now);
        if (chat !== null) this.take(chat, now);
        return;
      }
      await this.sleep(wait, signal);
    }
  }

  /** Fails every waiting call and any later one; a call already started is not touched. */
  close(): void {
    this.closed = true;
    for (const w of [...this.waiting]) w.stop(new TelegramClientClosedError());
    this.starts.clear();
  }

  private waitOf(key: string, limit: number, now: number): number {
    const starts = this.starts.get(key);
    if (!starts) return 0;
    while (starts.length > 0 && starts[0]! <= now - WINDOW_MS) starts.shift();
    if (starts.length === 0) {
      // A chat called once is not remembered forever (a bot may be in thousands).
      this.starts.delete(key);
      return 0;
    }
    if (starts.length < limit) return 0;
    return starts[starts.length - limit]! + WINDOW_MS - now;
  }

  private take(key: string, now: number): void {
    const starts = this.starts.get(key);
    if (starts) starts.push(now);
    else this.starts.set(key, [now]);
  }

  private sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        timer: setTimeout(() => {
          finish();
          resolve();
        }, ms),
        stop: (err: unknown) => {
          clearTimeout(waiter.timer);
          finish();
          reject(err);
        },
      };
      const onAbort = () => waiter.stop(signal?.reason);
      const finish = () => {
        this.waiting.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      this.waiting.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

const paces = new WeakMap<Api, Pace>();

/** The AbortSignal as grammY's methods type it (the `abort-controller` shim's); at run time grammY passes on the one given. */
export type GrammySignal = Parameters<Api['getMe']>[0];
export const grammySignal = (signal: AbortSignal): GrammySignal => signal as unknown as GrammySignal;

/** The chat a call is made in, as the pace counts it: its `chat_id` as text; null when it has none. */
export function chatOfPayload(payload: unknown): string | null {
  const chatId = typeof payload === 'object' && payload !== null ? (payload as { chat_id?: unknown }).chat_id : undefined;
  return typeof chatId === 'number' || typeof chatId === 'string' ? String(chatId) : null;
}

/** A bot's client: its `Api` against `apiUrl` (TENURE_TELEGRAM_API_URL), paced as `pace` says. */
export function createTelegramClient(
  token: string,
  apiUrl: string,
  pace: TelegramPaceOptions,
  options: Omit<ApiClientOptions, 'apiRoot' | 'sensitiveLogs'> = {},
): TelegramClient {
  const api = createTelegramApi(token, apiUrl, options);
  const limiter = new Pace(pace);
  api.config.use(async (prev, method, payload, signal) => {
    if (!UNPACED.has(method)) await limiter.slot(chatOfPayload(payload), signal as AbortSignal | undefined);
    return prev(method, payload, signal);
  });
  paces.set(api, limiter);
  return api;
}

/** Stops the client's timers: calls waiting for a slot fail (TelegramClientClosedError); calls out finish on their own. */
export function closeTelegramClient(client: TelegramClient): void {
  paces.get(client)?.close();
}
