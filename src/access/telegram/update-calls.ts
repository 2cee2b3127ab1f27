import type { Clock } from '../../domain/clock.js';
import { telegramFailure, type TelegramFailure } from './api.js';
import { grammySignal, type TelegramClient } from './client.js';
import type { TelegramCall } from './update-plan.js';

/**
 * The Bot API calls of a held bot's updates loop (updates.ts): each call run so that what grammY
 * throws becomes a `CallFailed` saying only `telegramFailure` (a grammY error carries the token),
 * and the calls an update's plan needs (update-plan.ts) made with the bot's client.
 */

/** The bot was let go, or its token refused: this bot's loop ends here. */
export class Stop extends Error {}

/** A Telegram call failed: `failure` says why; `afterMs` when Telegram said when to come back. */
export class CallFailed extends Error {
  constructor(
    readonly failure: TelegramFailure,
    /** The token the call was made with (a reconnection may have replaced it since). */
    readonly token: string,
    readonly method: string,
  ) {
    super(`${method}: ${failure.code}`);
  }
}

/** Runs a Bot API call; what grammY throws becomes a CallFailed that says only `telegramFailure`. */
export async function callTelegram<T>(signal: AbortSignal, client: TelegramClient, method: string, run: () => Promise<T>): Promise<T> {
  // grammY starts a request whose signal aborted before it was given (it waits for an abort event).
  if (signal.aborted) throw new Stop();
  try {
    return await run();
  } catch (err) {
    throw new CallFailed(telegramFailure(err), client.token, method);
  }
}

/** Makes one call of an update's plan with the bot's client. */
export function makeCall(client: TelegramClient, call: TelegramCall, clock: Clock, abort: AbortSignal): Promise<unknown> {
  const signal = grammySignal(abort);
  const chat = Number(call.chatId);
  switch (call.method) {
    case 'banChatMember': {
      const until = call.banSeconds === null ? {} : { until_date: Math.floor(clock.now().getTime() / 1000) + call.banSeconds };
      return client.banChatMember(chat, Number(call.userId), until, signal);
    }
    case 'unbanChatMember':
      // Only a ban is lifted: without it, unbanning a member removes them (docs: unbanChatMember).
      return client.unbanChatMember(chat, Number(call.userId), { only_if_banned: true }, signal);
    case 'revokeChatInviteLink':
      return client.revokeChatInviteLink(chat, call.inviteLink, signal);
    case 'approveChatJoinRequest':
      return client.approveChatJoinRequest(chat, Number(call.userId), signal);
    case 'declineChatJoinRequest':
      return client.declineChatJoinRequest(chat, Number(call.userId), signal);
  }
}
