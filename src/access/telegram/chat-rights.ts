import type { Api } from 'grammy';
import type { ChatMember } from 'grammy/types';
import type { BotChatRights, ChatToCheck } from '../../domain/integrations/integrations.service.js';
import type { PlatformError } from '../../domain/targets/target.view.js';
import { telegramFailure } from './api.js';

/**
 * The bot's rights in each target chat, for a connection's status (docs/access-telegram.md,
 * "2. Make the bot an admin of each chat"): `getChatMember(chat, bot)`. tenure needs the bot to be
 * an admin that can invite users (single-use links, join requests) and restrict members (the
 * kick: ban, then unban).
 */

/**
 * Chats asked at once: the status waits for all of them, and Telegram's flood limits are
 * unpublished, so a few calls in flight, not fifty.
 */
export const CHAT_CHECKS_AT_ONCE = 5;

const NO_RIGHTS = { isAdmin: false, canInviteUsers: false, canRestrictMembers: false } as const;

/** The bot's rights as its membership shows them. Pure. */
export function rightsOf(member: ChatMember): BotChatRights {
  switch (member.status) {
    case 'creator':
      // An owner has every right (a bot cannot own a chat today; the API allows for it).
      return { isAdmin: true, canInviteUsers: true, canRestrictMembers: true, error: null };
    case 'administrator':
      return { isAdmin: true, canInviteUsers: member.can_invite_users, canRestrictMembers: member.can_restrict_members, error: null };
    case 'left':
      return { ...NO_RIGHTS, error: { code: 'bot_not_in_chat', message: 'The bot is not a member of this chat: add it as an admin' } };
    case 'kicked':
      return { ...NO_RIGHTS, error: { code: 'bot_kicked', message: 'The bot was banned from this chat: unban it, then add it again as an admin' } };
    default:
      // A member (restricted or not): in the chat, but not an admin.
      return { ...NO_RIGHTS, error: null };
  }
}

/** A chat id as the Bot API takes it: a number, or a public `@username` as it is. */
const chatIdOf = (chatId: string): number | string => (/^-?\d+$/.test(chatId) ? Number(chatId) : chatId);

/**
 * Asks Telegram for the bot's rights in each of `chats`, CHAT_CHECKS_AT_ONCE at a time, in
 * `chats`' order. A chat's own refusal (403: not a member, kicked; 400: chat not found) is that
 * chat's error. Any other failure (the token refused, a 429, a 5xx, no answer) is not about the
 * chat: the chats not yet asked are not asked, and carry that error, so an unreachable Telegram
 * costs one timeout, not one per chat, and a flood limit is not pressed further.
 */
export async function askChatRights(api: Api, botId: string, chats: readonly ChatToCheck[]): Promise<BotChatRights[]> {
  const rights: BotChatRights[] = [];
  let next = 0;
  let stoppedBy: PlatformError | null = null;
  const askInTurn = async () => {
    for (let i = next++; i < chats.length; i = next++) {
      if (stoppedBy) {
        rights[i] = { ...NO_RIGHTS, error: stoppedBy };
        continue;
      }
      try {
        rights[i] = rightsOf(await api.getChatMember(chatIdOf(chats[i]!.chatId), Number(botId)));
      } catch (err) {
        const failure = telegramFailure(err);
        const error = { code: failure.code, message: failure.description };
        rights[i] = { ...NO_RIGHTS, error };
        if (failure.kind !== 'forbidden' && failure.kind !== 'bad_request') stoppedBy ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CHAT_CHECKS_AT_ONCE, chats.length) }, askInTurn));
  return rights;
}
