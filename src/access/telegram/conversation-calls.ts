import type { TelegramReply } from '../../domain/front-desk/telegram-replies.js';
import type { TelegramFailure } from './api.js';
import { grammySignal, type TelegramClient } from './client.js';
import { CallFailed, callTelegram } from './update-calls.js';

/**
 * The Bot API calls of the bot's conversation with a member (src/domain/front-desk/
 * telegram-conversation.ts decides them): sendMessage with its inline keyboard, answerCallbackQuery.
 *
 * A reply Telegram refuses for good is noted and the rest go on: 403 (the user blocked the bot, or
 * never opened a chat with it) or 400 (chat not found, a callback query too old to answer). The
 * update is then marked handled like any other, so a refusal is met once and never retried in a
 * loop. A passing failure (429, 5xx, no answer) or a refused token throws: the update is handled
 * again later, replies included (a member may then see a message twice, never none).
 */

export interface RefusedReply {
  method: TelegramReply['method'];
  failure: TelegramFailure;
}

/** Makes the replies in order; returns those Telegram refused for good. */
export async function makeReplies(signal: AbortSignal, client: TelegramClient, replies: readonly TelegramReply[]): Promise<RefusedReply[]> {
  const refused: RefusedReply[] = [];
  for (const reply of replies) {
    try {
      await callTelegram(signal, client, reply.method, () => makeReply(client, reply, signal));
    } catch (err) {
      if (!(err instanceof CallFailed)) throw err;
      const { kind } = err.failure;
      if (kind !== 'forbidden' && kind !== 'bad_request') throw err;
      refused.push({ method: reply.method, failure: err.failure });
    }
  }
  return refused;
}

function makeReply(client: TelegramClient, reply: TelegramReply, abort: AbortSignal): Promise<unknown> {
  const signal = grammySignal(abort);
  switch (reply.method) {
    case 'sendMessage':
      return client.sendMessage(
        Number(reply.chatId),
        reply.text,
        {
          ...(reply.keyboard ? { reply_markup: { inline_keyboard: reply.keyboard } } : {}),
          // A pay link's preview would show Stripe's page, or nothing: the button says enough.
          link_preview_options: { is_disabled: true },
        },
        signal,
      );
    case 'answerCallbackQuery':
      return client.answerCallbackQuery(reply.callbackQueryId, reply.text ? { text: reply.text } : {}, signal);
  }
}
