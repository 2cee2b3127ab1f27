import type { Api } from 'grammy';
import type { ChatMember } from 'grammy/types';
import type { ChatAnswer, ChatError, Presence } from '../../store/telegram-reconcile.store.js';
import { telegramFailure, type TelegramFailure } from './api.js';
import { grammySignal } from './client.js';

/**
 * Telegram drift repair's questions (telegram.reconciler.ts): `getChatMember` about a chat's
 * members, a few at a time, and what each answer or failure means: where the member stands, or
 * that the bot cannot see the chat, or that the bot should stop asking for now.
 */

/** What getChatMember takes: grammY's `Api`, or the worker's client that paces it. */
export type ChatMemberReader = Pick<Api, 'getChatMember'>;

/** Where a member stands, by their status in the chat (Bot API ChatMember). Pure. */
export function presenceOf(member: ChatMember): Presence {
  switch (member.status) {
    case 'creator':
    case 'administrator':
      // In the chat, and beyond what a bot may remove: a revoke there is the worker's to report.
      return 'admin';
    case 'member':
      return 'member';
    case 'restricted':
      return member.is_member ? 'member' : 'absent';
    default:
      // `left`, or `kicked` (banned from the chat).
      return 'absent';
  }
}

/**
 * Whether a failed getChatMember says the bot cannot see the chat: 403 (removed from it, not a
 * member), 400 "chat not found", or a group that became a supergroup (its id changed). Null when
 * the failure is about something else (the user, Telegram itself, the bot's pace). Pure.
 */
export function chatRefusal(failure: TelegramFailure): ChatError | null {
  if (failure.kind === 'forbidden') return { code: failure.code, message: failure.description };
  if (failure.kind === 'bad_request' && (failure.migrateToChatId !== undefined || /chat not found/i.test(failure.description))) {
    return { code: failure.code, message: failure.description };
  }
  return null;
}

/** A chat id as the Bot API takes it: a number, or a public `@username` as it is. */
const chatIdOf = (chatId: string): number | string => (/^-?\d+$/.test(chatId) ? Number(chatId) : chatId);

/** Why a page's questions stopped before its end (`stopped`: the bot let go, or the reconciler stopping). */
export type Halt = { kind: 'chat'; error: ChatError } | { kind: 'bot'; failure: TelegramFailure } | { kind: 'stopped' };

/** getChatMember for each of `members` of the chat, `atOnce` at a time; stops asking at the first refusal of the chat or failure of the bot. */
export async function askChatMembers(
  client: ChatMemberReader,
  chatId: string,
  members: readonly string[],
  atOnce: number,
  signal: AbortSignal,
): Promise<{ answers: ChatAnswer[]; halt?: Halt }> {
  const answers: ChatAnswer[] = [];
  let halt: Halt | undefined;
  let next = 0;
  const askInTurn = async () => {
    while (!halt && next < members.length) {
      const userId = members[next++]!;
      if (signal.aborted) {
        halt = { kind: 'stopped' };
        return;
      }
      try {
        answers.push({ userId, presence: presenceOf(await client.getChatMember(chatIdOf(chatId), Number(userId), grammySignal(signal))) });
      } catch (err) {
        if (signal.aborted) {
          halt = { kind: 'stopped' };
          return;
        }
        const failure = telegramFailure(err);
        const refusal = chatRefusal(failure);
        if (refusal) halt ??= { kind: 'chat', error: refusal };
        // 400 about the member (user not found…): nothing to compare for them; the others go on.
        else if (failure.kind !== 'bad_request') halt ??= { kind: 'bot', failure };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, members.length) }, askInTurn));
  return halt ? { answers, halt } : { answers };
}
