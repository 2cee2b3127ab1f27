import type { ChatMember, User } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import type { TelegramInvite } from '../../store/telegram-invites.store.js';
import type { TelegramFailure } from './api.js';
import {
  chatIdOf,
  CHAT_ADMIN,
  grantStep,
  inviteName,
  inviteRequest,
  isGoneLink,
  isInChat,
  kickStep,
  resultOfFailure,
  reusableInvite,
  TELEGRAM_TOKEN_REFUSED,
  telegramUserId,
} from './telegram-decisions.js';

const user: User = { id: 500_000_001, is_bot: false, first_name: 'Ada' };
const member = (status: ChatMember['status'], extra: Record<string, unknown> = {}): ChatMember => ({ user, status, ...extra }) as ChatMember;
const MEMBERSHIP = '1a2b3c4d-5e6f-4a0b-8c9d-0e1f2a3b4c5d';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const NOW = new Date('2030-01-01T00:00:00.000Z');

describe('Telegram access: who is in the chat', () => {
  it.each([
    ['creator', {}, true],
    ['administrator', {}, true],
    ['member', {}, true],
    ['restricted', { is_member: true }, true],
    ['restricted', { is_member: false }, false],
    ['left', {}, false],
    ['kicked', { until_date: 0 }, false],
  ] as const)('%s %j: in the chat %s', (status, extra, inChat) => {
    expect(isInChat(member(status, extra))).toBe(inChat);
  });

  it('a grant: synced when in, the chat ban lifted first when banned there, else an invite', () => {
    expect(grantStep(member('member'))).toBe('synced');
    expect(grantStep(member('restricted', { is_member: true }))).toBe('synced');
    expect(grantStep(member('kicked', { until_date: 0 }))).toBe('unban_then_invite');
    expect(grantStep(member('left'))).toBe('invite');
    expect(grantStep(member('restricted', { is_member: false }))).toBe('invite');
  });

  it('a kick: nothing to do when out, never the owner or an admin, else a kick', () => {
    expect(kickStep(member('left'))).toBe('gone');
    expect(kickStep(member('kicked', { until_date: 0 }))).toBe('gone');
    expect(kickStep(member('creator'))).toBe('untouchable');
    expect(kickStep(member('administrator'))).toBe('untouchable');
    expect(kickStep(member('member'))).toBe('kick');
    expect(kickStep(member('restricted', { is_member: true }))).toBe('kick');
  });

  it('chat and user ids as the Bot API takes them', () => {
    expect(chatIdOf('-1001234567890')).toBe(-1001234567890);
    expect(chatIdOf('@paid_channel')).toBe('@paid_channel');
    expect(telegramUserId('500000001')).toBe(500000001);
    for (const bad of ['0', '-5', '12a', '', '99999999999999999']) expect(telegramUserId(bad)).toBeNull();
  });
});

describe('Telegram access: the invite link of one member', () => {
  it('single-use: member_limit 1, expiring after the lifetime, named after the membership and the user', () => {
    const row = { membershipId: MEMBERSHIP, userId: '500000001' };
    expect(inviteRequest(row, { mode: 'single_use', ttlMs: DAY, now: NOW })).toStrictEqual({
      name: 'm:1a2b3c4d u:500000001',
      expire_date: (NOW.getTime() + DAY) / 1000,
      member_limit: 1,
    });
  });

  it('join request: creates_join_request, no member limit (Telegram refuses both)', () => {
    const request = inviteRequest({ membershipId: MEMBERSHIP, userId: '7' }, { mode: 'join_request', ttlMs: 1500, now: NOW });
    expect(request).toStrictEqual({ name: 'm:1a2b3c4d u:7', expire_date: NOW.getTime() / 1000 + 1, creates_join_request: true });
  });

  it('a name fits Telegram’s 32 characters, and a member whose membership is gone is named by user', () => {
    expect(inviteName({ membershipId: MEMBERSHIP, userId: '1234567890123456789012345' })).toHaveLength(32);
    expect(inviteName({ membershipId: null, userId: '42' })).toBe('u:42');
  });

  const link = (o: Partial<TelegramInvite> = {}): TelegramInvite => ({
    id: 'i',
    projectId: 'p',
    targetId: 't',
    userId: '1',
    membershipId: MEMBERSHIP,
    chatId: '-100',
    botId: 'bot',
    inviteLink: 'https://t.me/+a',
    name: 'm',
    createsJoinRequest: false,
    expiresAt: new Date(NOW.getTime() + DAY),
    createdAt: NOW,
    usedAt: null,
    usedBy: null,
    revokedAt: null,
    ...o,
  });
  const reuse = (current: TelegramInvite[], mode: 'single_use' | 'join_request' = 'single_use') =>
    reusableInvite(current, { botId: 'bot', mode, ttlMs: 10 * DAY, now: NOW });

  it('hands out a current link again while more than a tenth of its lifetime is left', () => {
    const fresh = link({ expiresAt: new Date(NOW.getTime() + DAY + 1) });
    expect(reuse([fresh])).toBe(fresh);
    expect(reuse([link({ expiresAt: new Date(NOW.getTime() + DAY) })])).toBeNull();
    expect(reuse([])).toBeNull();
  });

  it('never another bot’s link, nor one of the other kind; the newest that fits', () => {
    const later = new Date(NOW.getTime() + 5 * DAY);
    expect(reuse([link({ botId: 'old bot', expiresAt: later })])).toBeNull();
    expect(reuse([link({ expiresAt: later })], 'join_request')).toBeNull();
    const request = link({ id: 'r', createsJoinRequest: true, expiresAt: later });
    expect(reuse([link({ id: 'other', expiresAt: later }), request], 'join_request')).toBe(request);
  });
});

describe('Telegram access: what a failure means', () => {
  const failure = (kind: TelegramFailure['kind'], code: string, description: string, extra: object = {}) => ({ kind, code, description, ...extra }) as TelegramFailure;
  const granted = { desired: 'granted' } as const;
  const revoked = { desired: 'revoked' } as const;

  it('401: the token is refused; the bot is flagged', () => {
    expect(resultOfFailure(failure('unauthorized', '401', 'Unauthorized'), granted)).toStrictEqual({ outcome: 'unauthorized', error: TELEGRAM_TOKEN_REFUSED });
  });

  it('429: retried when Telegram said', () => {
    expect(resultOfFailure(failure('rate_limited', '429', 'Too Many Requests: retry after 7', { retryAfterSeconds: 7 }), granted)).toStrictEqual({
      outcome: 'retry',
      error: { code: '429', message: 'Too Many Requests: retry after 7' },
      retryAfterMs: 7000,
    });
  });

  it.each([
    ['server', '502', 'Bad Gateway'],
    ['network', 'ECONNREFUSED', 'Telegram could not be reached (ECONNREFUSED)'],
    ['timeout', 'timeout', 'Telegram did not answer in time'],
  ] as const)('%s: retried on the schedule', (kind, code, description) => {
    expect(resultOfFailure(failure(kind, code, description), granted)).toStrictEqual({ outcome: 'retry', error: { code, message: description } });
  });

  it.each([
    ['forbidden', '403', 'Forbidden: bot was kicked from the supergroup chat', /add it back, then make the bot an admin .*Invite users via link.*Ban users/],
    ['forbidden', '403', 'Forbidden: bot is not a member of the channel chat', /the bot is not in the chat: add it, then make the bot an admin/],
    ['forbidden', '403', 'Forbidden: something else', /^Forbidden: something else: make the bot an admin of the chat with/],
    ['bad_request', '400', 'Bad Request: not enough rights to manage chat invite link', /give the bot the admin right “Invite users via link”$/],
    ['bad_request', '400', 'Bad Request: not enough rights to restrict/unrestrict chat member', /give the bot the admin right “Ban users”$/],
    ['bad_request', '400', 'Bad Request: chat not found', /check the target's external_id/],
    ['bad_request', '400', 'Bad Request: method is available for supergroup and channel chats only', /make it a supergroup$/],
  ] as const)('%s %s "%s": failed, the target flagged, saying what to fix', (kind, code, description, hint) => {
    for (const row of [granted, revoked]) {
      const result = resultOfFailure(failure(kind, code, description), row);
      expect(result).toMatchObject({ outcome: 'failed', targetFault: true, error: { code } });
      const message = (result as { error: { message: string } }).error.message;
      expect(message.startsWith(`${description}: `)).toBe(true);
      expect(message).toMatch(hint);
    }
  });

  it('a group that became a supergroup: the new chat id to set', () => {
    const result = resultOfFailure(failure('bad_request', '400', 'Bad Request: group chat was upgraded to a supergroup chat', { migrateToChatId: -1009 }), granted);
    expect(result).toMatchObject({ outcome: 'failed', targetFault: true });
    expect((result as { error: { message: string } }).error.message).toMatch(/set the target's external_id to -1009$/);
  });

  it('the owner or an admin cannot be removed: this row fails, the target is fine', () => {
    for (const description of ["Bad Request: can't remove chat owner", 'Bad Request: user is an administrator of the chat']) {
      expect(resultOfFailure(failure('bad_request', '400', description), revoked)).toMatchObject({ outcome: 'failed', targetFault: false, error: { code: '400' } });
    }
    expect(CHAT_ADMIN.code).toBe('chat_admin');
  });

  it('an unknown user: a grant fails this row only, a revoke is done (they hold nothing)', () => {
    const unknown = failure('bad_request', '400', 'Bad Request: user not found');
    const result = resultOfFailure(unknown, granted);
    expect(result).toMatchObject({ outcome: 'failed', targetFault: false, error: { code: '400' } });
    expect((result as { error: { message: string } }).error.message).toMatch(/^Bad Request: user not found: .*Telegram user id/);
    expect(resultOfFailure(unknown, revoked)).toStrictEqual({ outcome: 'applied' });
  });

  it('any other refusal fails this row only, with Telegram’s words', () => {
    expect(resultOfFailure(failure('bad_request', '400', 'Bad Request: EXPIRE_DATE_INVALID'), granted)).toStrictEqual({
      outcome: 'failed',
      targetFault: false,
      error: { code: '400', message: 'Bad Request: EXPIRE_DATE_INVALID' },
    });
  });

  it('a link Telegram no longer knows is revoked already', () => {
    expect(isGoneLink(failure('bad_request', '400', 'Bad Request: INVITE_HASH_EXPIRED'))).toBe(true);
    expect(isGoneLink(failure('bad_request', '400', 'Bad Request: not enough rights to manage chat invite link'))).toBe(false);
    expect(isGoneLink(failure('server', '500', 'INVITE_HASH_EXPIRED'))).toBe(false);
  });
});
