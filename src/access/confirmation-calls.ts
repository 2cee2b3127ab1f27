import type { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import type { ClaimedConfirmation, MessageChannel, SendOutcome } from '../domain/front-desk/confirmations.js';
import type { LinkButton } from '../domain/lifecycle/member-messages.js';
import type { HeldBot } from './bot-leases.js';
import { isDiscordApiError, isDiscordHttpError, isDiscordRateLimitError } from './discord/discord-libraries.js';
import { grammySignal, TelegramClientClosedError, type TelegramClient } from './telegram/client.js';
import { telegramFailure } from './telegram/api.js';

/**
 * The platform calls of a confirmation (src/domain/front-desk/confirmations.ts): one message to one
 * member through the project's bot, with the client of the access worker that holds the bot's
 * lease in this process. So a message waits in the same rate-limit queues as the bot's access
 * calls (Discord: the bot's `@discordjs/rest` client, which waits out 429s itself; Telegram: the
 * bot's paced grammY client), and only the lease holder calls with the bot (one budget per bot).
 *
 * - Discord: Create DM (`POST /users/@me/channels` `{recipient_id}`), then Create Message
 *   (`POST /channels/{channel.id}/messages` `{content, components?}`): a message's link buttons are
 *   one action row (component type 1) of buttons of style 5 (Link: `label` and `url`, no `custom_id`). A member whose DMs are closed to the bot
 *   is refused with 403 and JSON code 50007 "Cannot send messages to this user".
 * - Telegram: `sendMessage` to the member's private chat (its id is the user's); link buttons are
 *   `reply_markup` an InlineKeyboardMarkup, one row of `{text, url}` buttons. 403 "Forbidden:
 *   bot was blocked by the user", 403 "…bot can't initiate conversation with a user" and 400 "Bad
 *   Request: chat not found" (the member never opened the bot) mean the bot cannot write to them.
 *
 * A bot not held here, or let go while its message was out (its `signal` aborts), is `released`:
 * the row goes back to whoever holds the bot. Answers name the platform's code and message, never
 * the token (it is in Telegram's URL: `telegramFailure` describes a failure without it).
 */

/** The bots of one platform this process holds: an access worker (its `id` is the lease owner). */
export interface HeldBots<C> {
  readonly id: string;
  withBot<T>(projectId: string, work: (bot: HeldBot<C>) => Promise<T>): Promise<T | null>;
}

export interface ConfirmationBots {
  discord: HeldBots<REST> | null;
  telegram: HeldBots<TelegramClient> | null;
}

export function confirmationCalls(bots: ConfirmationBots): MessageChannel {
  const owners = [bots.discord?.id, bots.telegram?.id].filter((id): id is string => id !== undefined);
  const notHeld: SendOutcome = { kind: 'released', error: 'the bot is not held by this process' };
  return {
    owners,
    async send(to: Pick<ClaimedConfirmation, 'platform' | 'projectId' | 'userId'>, text: string, buttons: readonly LinkButton[] = []): Promise<SendOutcome> {
      const sent =
        to.platform === 'discord'
          ? await bots.discord?.withBot(to.projectId, (bot) => sendOnDiscord(bot.client, to.userId, text, bot.signal, buttons))
          : await bots.telegram?.withBot(to.projectId, (bot) => sendOnTelegram(bot.client, to.userId, text, bot.signal, buttons));
      return sent ?? notHeld;
    },
  };
}

const LOST: SendOutcome = { kind: 'released', error: "the bot's lease was lost while the message was out" };

/** Create DM, then Create Message, through the bot's REST client; never throws. */
export async function sendOnDiscord(rest: REST, userId: string, text: string, signal: AbortSignal, buttons: readonly LinkButton[] = []): Promise<SendOutcome> {
  if (signal.aborted) return LOST;
  try {
    const dm = (await rest.post(Routes.userChannels(), { body: { recipient_id: userId }, signal })) as { id?: unknown } | null;
    if (typeof dm?.id !== 'string') return { kind: 'retry', error: 'invalid_response: no DM channel id' };
    const components = buttons.length === 0 ? undefined : [{ type: 1, components: buttons.map((b) => ({ type: 2, style: 5, label: b.label, url: b.url })) }];
    await rest.post(Routes.channelMessages(dm.id), { body: { content: text, ...(components ? { components } : {}) }, signal });
    return { kind: 'sent' };
  } catch (err) {
    return signal.aborted ? LOST : discordOutcome(err);
  }
}

/**
 * What the library threw: DiscordAPIError (Discord answered 4xx with a JSON code; 403 50007 is a
 * closed DM), HTTPError (a 5xx), RateLimitError (only if the client rejects on rate limits: the
 * access worker's waits instead), else no answer (a timeout, the network).
 */
export function discordOutcome(err: unknown): SendOutcome {
  if (isDiscordApiError(err)) {
    const raw = err.rawError as { message?: unknown };
    const error = `${err.status}: ${typeof err.code === 'number' ? `${err.code} ` : ''}${typeof raw.message === 'string' ? raw.message : err.message}`;
    if (err.status === 403 && err.code === 50007) return { kind: 'unreachable', reason: 'dm_closed', error };
    if (err.status >= 500 || err.status === 429) return { kind: 'retry', error };
    return { kind: 'failed', error };
  }
  if (isDiscordHttpError(err)) return { kind: 'retry', error: `${err.status}: ${err.message}` };
  if (isDiscordRateLimitError(err)) return { kind: 'retry', error: `429: ${err.message}`, retryAfterMs: clampMs(err.retryAfter) };
  // After a 401 the library drops the token: the bot's queued calls fail with this.
  if (err instanceof Error && /Expected token to be set/.test(err.message)) return { kind: 'failed', error: '401: the bot token was refused' };
  if (err instanceof Error && err.name === 'AbortError') return { kind: 'retry', error: 'timeout' };
  const cause = err instanceof Error ? (err as { cause?: { code?: unknown } }).cause?.code : undefined;
  return { kind: 'retry', error: typeof cause === 'string' ? cause : 'network error' };
}

/** `sendMessage` to the member's private chat through the bot's paced client; never throws. */
export async function sendOnTelegram(api: TelegramClient, userId: string, text: string, signal: AbortSignal, buttons: readonly LinkButton[] = []): Promise<SendOutcome> {
  if (signal.aborted) return LOST;
  try {
    const markup = buttons.length === 0 ? {} : { reply_markup: { inline_keyboard: [buttons.map((b) => ({ text: b.label, url: b.url }))] } };
    await api.sendMessage(userId, text, markup, grammySignal(signal));
    return { kind: 'sent' };
  } catch (err) {
    if (signal.aborted || err instanceof TelegramClientClosedError) return LOST;
    return telegramOutcome(err);
  }
}

/** What grammY threw, by `telegramFailure` (which never quotes the URL, and so the token). */
export function telegramOutcome(err: unknown): SendOutcome {
  const f = telegramFailure(err);
  const error = `${f.code}: ${f.description}`;
  switch (f.kind) {
    case 'rate_limited':
      return { kind: 'retry', error, retryAfterMs: clampMs(f.retryAfterSeconds * 1000) };
    case 'server':
    case 'network':
    case 'timeout':
      return { kind: 'retry', error };
    case 'forbidden':
      if (/blocked by the user/i.test(f.description)) return { kind: 'unreachable', reason: 'bot_blocked', error };
      if (/can't initiate conversation/i.test(f.description)) return { kind: 'unreachable', reason: 'no_conversation', error };
      return { kind: 'failed', error };
    case 'bad_request':
      if (/chat not found/i.test(f.description)) return { kind: 'unreachable', reason: 'no_conversation', error };
      return { kind: 'failed', error };
    case 'unauthorized':
      return { kind: 'failed', error };
  }
}

/** A platform's wait as milliseconds, at least 1 s and at most 1 h. */
function clampMs(ms: number): number {
  return Math.min(Math.max(Math.ceil(ms), 1000), 3_600_000);
}
