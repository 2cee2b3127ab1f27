import { GrammyError } from 'grammy';
import type { ChatMember, User } from 'grammy/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { grammy, telegramFailure } from './api.js';
import { chatRefusal, presenceOf } from './chat-members.js';

// grammY is loaded at first use (src/lazy-library.ts); these tests build its clients and errors directly.
beforeAll(() => grammy.load());

const user: User = { id: 700_000_001, is_bot: false, first_name: 'Ada' };
const failure = (error_code: number, description: string, parameters?: object) =>
  telegramFailure(new GrammyError("Call to 'getChatMember' failed!", { ok: false, error_code, description, ...(parameters ? { parameters } : {}) }, 'getChatMember', {}));

/** A restricted member: the rights do not matter here, only `is_member`. */
const restricted = (is_member: boolean) => ({ status: 'restricted', user, is_member, until_date: 0 }) as unknown as ChatMember;

describe('presenceOf: where getChatMember says a member stands', () => {
  it.each([
    ['creator', { status: 'creator', user, is_anonymous: false }, 'admin'],
    ['administrator', { status: 'administrator', user, can_be_edited: false, is_anonymous: false }, 'admin'],
    ['member', { status: 'member', user }, 'member'],
    ['left', { status: 'left', user }, 'absent'],
    ['kicked (banned from the chat)', { status: 'kicked', user, until_date: 0 }, 'absent'],
  ])('%s is %s', (_, member, presence) => {
    expect(presenceOf(member as ChatMember)).toBe(presence);
  });

  it('restricted counts as in the chat only while is_member', () => {
    expect(presenceOf(restricted(true))).toBe('member');
    expect(presenceOf(restricted(false))).toBe('absent');
  });
});

describe('chatRefusal: a failure that says the bot cannot see the chat', () => {
  it.each([
    [403, 'Forbidden: bot was kicked from the supergroup chat'],
    [403, 'Forbidden: bot is not a member of the channel chat'],
    [400, 'Bad Request: chat not found'],
  ])('%i %s flags the chat, with Telegram\'s code and description', (code, description) => {
    expect(chatRefusal(failure(code, description))).toStrictEqual({ code: String(code), message: description });
  });

  it('a group that became a supergroup flags the chat (its id changed)', () => {
    const description = 'Bad Request: group chat was upgraded to a supergroup chat';
    expect(chatRefusal(failure(400, description, { migrate_to_chat_id: -1001234567890 }))).toStrictEqual({ code: '400', message: description });
  });

  it.each([
    [400, 'Bad Request: user not found'],
    [429, 'Too Many Requests: retry after 3'],
    [401, 'Unauthorized'],
    [502, 'Bad Gateway'],
  ])('%i %s is not about the chat', (code, description) => {
    expect(chatRefusal(failure(code, description))).toBeNull();
  });
});
