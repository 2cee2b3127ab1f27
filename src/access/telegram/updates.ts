import type { Api } from 'grammy';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import { TELEGRAM_UPDATE_KINDS } from '../../domain/integrations/telegram-webhook.service.js';
import type { TelegramWebhookSecrets } from '../../domain/integrations/telegram-webhook-secret.js';
import type { TelegramUpdateHandling } from '../../domain/access/telegram-update-effects.js';
import type { TelegramConversation } from '../../domain/front-desk/telegram-conversation.js';
import { keepsUpdate } from '../../domain/front-desk/telegram-talk.js';
import type { AccessError } from '../../store/access-worker.store.js';
import type { ReceivedUpdate, TelegramBotKey, TelegramUpdatesStore } from '../../store/telegram-updates.store.js';
import type { WakeTopic } from '../../database/wakeups.js';
import { Alarm } from '../../wake-loop.js';
import type { HeldBot } from '../bot-leases.js';
import { createTelegramApi, grammy, TELEGRAM_TIMEOUT_SECONDS } from './api.js';
import { grammySignal, type TelegramClient } from './client.js';
import { CallFailed, callTelegram, Stop } from './update-calls.js';
import { TelegramUpdateHandler } from './update-handling.js';

/**
 * A held Telegram bot's updates (docs/access-telegram.md: joins, leaves and join
 * requests, at least once and idempotently; and the members' private messages and button presses,
 * docs/front-desk.md). The process holding the bot's lease (every connected
 * bot is held: the connector's `holdAlways`) is the one that receives and handles them:
 *
 * - polling (TENURE_TELEGRAM_UPDATES=polling): `deleteWebhook` when the bot is taken, then a
 *   long poll, `getUpdates(offset, timeout 25, allowed_updates)`; each batch is stored with the
 *   next offset in one statement fenced by the lease (the offset confirms the batch to Telegram at
 *   the next poll, so a crash before it gets the batch again: stored once);
 * - webhook: `setWebhook(url, secret_token, allowed_updates)` when the bot is taken; the route
 *   stores what Telegram posts and its commit wakes the holder (the `access` wake-up).
 *
 * Either way the holder then handles the bot's unhandled updates in update_id order, each one
 * by update-handling.ts: its calls made first (each harmless to repeat), then its effects written
 * with its handled mark in one transaction. A passing failure (429, 5xx, no answer) stops the
 * round and the same update is handled again after a pause, so the order holds.
 *
 * Nothing here logs a grammY error or the Api (they carry the token): only `telegramFailure`.
 */

export interface TelegramUpdatesDeps {
  store: Pick<TelegramUpdatesStore, 'receivePolled' | 'offset' | 'unhandled' | 'withUnhandled' | 'context' | 'flagUnauthorized'>;
  /** Marks an update handled with its effects, in one transaction (src/domain/access/telegram-update-effects.ts). */
  handling: Pick<TelegramUpdateHandling, 'handled'>;
  /** What the bot answers a member who talks to it (src/domain/front-desk/telegram-conversation.ts). */
  conversation: Pick<TelegramConversation, 'answer'>;
  /** TENURE_TELEGRAM_API_URL: the long poll has a client of its own, whose timeout outlasts the poll. */
  apiUrl: string;
  /** TENURE_TELEGRAM_UPDATES. */
  mode: 'polling' | 'webhook';
  /** TENURE_TELEGRAM_WEBHOOK_URL in webhook mode: Telegram posts to `${webhookUrl}/telegram/updates/${projectId}`. */
  webhookUrl: string | undefined;
  /** The bots' secret tokens (the route checks them); needed in webhook mode. */
  secrets: TelegramWebhookSecrets | null;
  /** Wake-ups after commits in any process: the route's inserts wake the holder (webhook mode). */
  wakeups: { subscribe(topic: WakeTopic, handler: () => void): Promise<() => void> } | null;
  clock: Clock;
  logger: Logger;
  random?: () => number;
}

export interface TelegramUpdatesOptions {
  /** getUpdates' long-poll timeout, in seconds (Telegram allows up to 50). */
  pollTimeoutSeconds: number;
  /** How often a webhook holder looks for updates without a wake-up (a wake-up can be lost). */
  inboxPollMs: number;
  /** The longest pause after failures in a row. */
  maxBackoffMs: number;
}

export const DEFAULT_TELEGRAM_UPDATES_OPTIONS: TelegramUpdatesOptions = { pollTimeoutSeconds: 25, inboxPollMs: 5_000, maxBackoffMs: 60_000 };

/** Updates read from the inbox at a time. */
const INBOX_BATCH = 100;

/** One held bot's updates: its loop runs until the bot is let go or `stop` is called. */
export class TelegramUpdates {
  /** Resolves once the loop has ended. */
  readonly done: Promise<void>;
  private readonly alarm = new Alarm();
  private readonly stopping = new AbortController();
  private readonly signal: AbortSignal;
  private poller: { token: string; api: Api } | null = null;
  private readonly handler: TelegramUpdateHandler;

  constructor(
    readonly bot: HeldBot<TelegramClient>,
    /** The lease owner (`integrations.lease_owner`) every write is fenced by. */
    private readonly owner: string,
    private readonly deps: TelegramUpdatesDeps,
    private readonly options: TelegramUpdatesOptions = DEFAULT_TELEGRAM_UPDATES_OPTIONS,
  ) {
    this.signal = AbortSignal.any([bot.signal, this.stopping.signal]);
    this.signal.addEventListener('abort', () => this.alarm.ring(), { once: true });
    this.handler = new TelegramUpdateHandler(bot, owner, deps, this.signal);
    this.done = this.run();
  }

  /** Updates may be waiting in the inbox (the webhook route stored some). */
  wake(): void {
    this.alarm.ring();
  }

  /** Ends the loop; an update being handled is left unhandled, for the next holder. */
  stop(): Promise<void> {
    this.stopping.abort();
    return this.done;
  }

  private get key(): TelegramBotKey {
    return { projectId: this.bot.projectId, botId: this.bot.botId };
  }

  private async run(): Promise<void> {
    const { logger } = this.deps;
    let failures = 0;
    /** The token the bot was set up with (deleteWebhook / setWebhook); a reconnection sets it up again. */
    let preparedFor: string | null = null;
    /** The next getUpdates offset; undefined until read from the database. */
    let offset: number | null | undefined;
    while (!this.signal.aborted) {
      this.alarm.reset();
      try {
        const client = this.bot.client;
        if (preparedFor !== client.token) {
          await this.prepare(client);
          preparedFor = client.token;
          offset = undefined;
        }
        await this.drain(client);
        if (this.deps.mode === 'polling') {
          offset = await this.poll(client, offset === undefined ? await this.deps.store.offset(this.key) : offset);
        } else {
          await this.alarm.sleep(this.options.inboxPollMs);
        }
        failures = 0;
      } catch (err) {
        if (this.signal.aborted || err instanceof Stop) break;
        if (err instanceof CallFailed && err.failure.kind === 'unauthorized') {
          if (await this.refused(err)) break;
          continue;
        }
        failures++;
        const pause = this.pauseAfter(err, failures);
        if (err instanceof CallFailed) {
          const conflict = err.failure.code === '409';
          logger[conflict ? 'warn' : 'error'](
            { projectId: this.bot.projectId, method: err.method, failure: err.failure, retryInMs: pause },
            conflict
              ? 'telegram updates: another getUpdates (or a webhook) is using this bot; polling again later'
              : 'telegram updates: a Bot API call failed; trying again later',
          );
        } else {
          logger.error({ err, projectId: this.bot.projectId, retryInMs: pause }, 'telegram updates: handling the bot’s updates failed; trying again later');
        }
        await this.pause(pause);
      }
    }
  }

  /** The bot was just taken (or reconnected): long polling needs no webhook; a webhook needs setting. */
  private async prepare(client: TelegramClient): Promise<void> {
    const signal = grammySignal(this.signal);
    if (this.deps.mode === 'polling') {
      await callTelegram(this.signal, client, 'deleteWebhook', () => client.deleteWebhook({ drop_pending_updates: false }, signal));
      return;
    }
    const { webhookUrl, secrets } = this.deps;
    if (!webhookUrl || !secrets) throw new Error('webhook mode needs TENURE_TELEGRAM_WEBHOOK_URL and the instance encryption key');
    const url = `${webhookUrl}/telegram/updates/${this.bot.projectId}`;
    await callTelegram(this.signal, client, 'setWebhook', () =>
      client.setWebhook(
        url,
        {
          secret_token: secrets.tokenFor(this.bot.projectId, this.bot.botId),
          allowed_updates: [...TELEGRAM_UPDATE_KINDS],
          // One delivery at a time: they arrive in update_id order, as long polling hands them.
          max_connections: 1,
        },
        signal,
      ),
    );
    this.deps.logger.info({ projectId: this.bot.projectId }, 'telegram updates: webhook set');
  }

  /** One long poll; stores what it brought with the next offset (fenced by the lease); returns that offset. */
  private async poll(client: TelegramClient, offset: number | null): Promise<number | null> {
    await grammy.load();
    const api = this.pollerOf(client.token);
    const updates = await callTelegram(this.signal, client, 'getUpdates', () =>
      api.getUpdates(
        { ...(offset === null ? {} : { offset }), timeout: this.options.pollTimeoutSeconds, allowed_updates: [...TELEGRAM_UPDATE_KINDS] },
        grammySignal(this.signal),
      ),
    );
    if (updates.length === 0) return offset;
    const next = Math.max(...updates.map((u) => u.update_id)) + 1;
    // What is said in groups is confirmed by the offset but not stored: nothing there is answered.
    const received: ReceivedUpdate[] = updates.filter(keepsUpdate).map((u) => ({ updateId: u.update_id, payload: u }));
    const { held } = await this.deps.store.receivePolled({ owner: this.owner, bot: this.key, now: this.deps.clock.now(), updates: received, nextOffset: next });
    if (!held) throw new Stop();
    return next;
  }

  /** The long poll's own client: the bot's token, a timeout longer than the poll, no pace (getUpdates is not paced). */
  private pollerOf(token: string): Api {
    if (this.poller?.token !== token) {
      this.poller = { token, api: createTelegramApi(token, this.deps.apiUrl, { timeoutSeconds: this.options.pollTimeoutSeconds + TELEGRAM_TIMEOUT_SECONDS }) };
    }
    return this.poller.api;
  }

  /** Handles the bot's unhandled updates in update_id order until none is left. */
  private async drain(client: TelegramClient): Promise<void> {
    for (;;) {
      const batch = await this.deps.store.unhandled(this.owner, this.key, this.deps.clock.now(), INBOX_BATCH);
      if (batch.length === 0) return;
      for (const update of batch) {
        if (this.signal.aborted) return;
        await this.handler.handle(client, update);
      }
    }
  }

  /**
   * The token was refused. If the bot was reconnected meanwhile (a new token), that was the old
   * one: go on with the new. Else the integration is flagged unhealthy, as the access worker
   * flags it, and the bot is let go once its lease is not renewed. Returns whether to stop.
   */
  private async refused(err: CallFailed): Promise<boolean> {
    if (this.bot.client.token !== err.token) return false;
    const error: AccessError = { code: err.failure.code, message: `Telegram refused the bot token (${err.failure.description}): connect the bot again with its current token` };
    const flagged = await this.deps.store.flagUnauthorized(this.owner, this.key, this.deps.clock.now(), error).catch((e: unknown) => {
      this.deps.logger.error({ err: e, projectId: this.bot.projectId }, 'telegram updates: flagging the refused bot failed');
      return false;
    });
    this.deps.logger.error({ projectId: this.bot.projectId, botId: this.bot.botId, flagged }, 'telegram updates: Telegram refused the bot token (401); no more updates for this bot until it is reconnected');
    return true;
  }

  /** Telegram's retry_after when it gave one; else 1 s, doubling per failure in a row, up to maxBackoffMs, ±20%. */
  private pauseAfter(err: unknown, failures: number): number {
    if (err instanceof CallFailed && err.failure.kind === 'rate_limited') return err.failure.retryAfterSeconds * 1000;
    const base = Math.min(this.options.maxBackoffMs, 1000 * 2 ** Math.min(failures - 1, 16));
    return Math.round(base * (0.8 + 0.4 * (this.deps.random ?? Math.random)()));
  }

  /** Sleeps `ms`, or until the bot is let go (a wake-up does not cut a pause short). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }
}

