import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AccessAt, UpdateContext } from '../../store/telegram-updates.store.js';
import type { TelegramFailure } from './api.js';
import { KICK_BAN_SECONDS } from './telegram-decisions.js';
import { botStatusError, effectsAfter, eventOf, INVITE_MISUSED, LEFT_CHAT, lookupOf, outcomeOf, planOf, type TelegramCall } from './update-plan.js';

const CHAT = -1001234567890;
const LINK = 'https://t.me/+AbCdEfGhIjKlMnOp';
const user = (id: number, isBot = false) => ({ id, is_bot: isBot, first_name: `u${id}` });
const member = (id: number, status: string, extra: Record<string, unknown> = {}) => ({ user: user(id), status, ...extra });
const admin = (id: number, rights: { can_invite_users?: boolean; can_restrict_members?: boolean } = {}) =>
  member(id, 'administrator', { can_be_edited: false, is_anonymous: false, can_manage_chat: true, can_invite_users: true, can_restrict_members: true, ...rights });
const chatMember = (before: object, after: object, extra: Record<string, unknown> = {}) => ({
  update_id: 1,
  chat_member: { chat: { id: CHAT, type: 'supergroup', title: 't' }, from: user(1), date: 1, old_chat_member: before, new_chat_member: after, ...extra },
});
const viaLink = (link: string) => ({ invite_link: { invite_link: link, creator: user(9, true), creates_join_request: false, is_primary: false, is_revoked: false } });

const TARGET = 'target-1';
const granted = (state = 'waiting_for_member'): AccessAt => ({ desired: 'granted', state, applied: state === 'synced' ? 'granted' : 'revoked' });
const revoked: AccessAt = { desired: 'revoked', state: 'synced', applied: 'revoked' };
const ctx = (o: Partial<UpdateContext> = {}): UpdateContext => ({
  target: { id: TARGET, healthy: true },
  user: null,
  userBanned: false,
  invite: null,
  inviteOwner: null,
  ...o,
});
const linkOf = (userId: string) => ({ targetId: TARGET, userId, chatId: String(CHAT) });

describe('eventOf: what an update says', () => {
  it('a join: from out of the chat (left, kicked, restricted and out) into it, with the link when Telegram gives it', () => {
    for (const before of [member(5, 'left'), member(5, 'kicked', { until_date: 0 }), member(5, 'restricted', { is_member: false })]) {
      expect(eventOf(chatMember(before, member(5, 'member'), viaLink(LINK)))).toStrictEqual({ kind: 'join', chatId: String(CHAT), userId: '5', inviteLink: LINK });
    }
    expect(eventOf(chatMember(member(5, 'left'), member(5, 'restricted', { is_member: true })))).toStrictEqual({ kind: 'join', chatId: String(CHAT), userId: '5', inviteLink: null });
  });

  it('a leave: from in the chat to left, kicked, or restricted and out', () => {
    for (const after of [member(5, 'left'), member(5, 'kicked', { until_date: 0 }), member(5, 'restricted', { is_member: false })]) {
      expect(eventOf(chatMember(member(5, 'member'), after))).toStrictEqual({ kind: 'leave', chatId: String(CHAT), userId: '5' });
    }
  });

  it('neither (a promotion, a ban of someone out already) is ignored', () => {
    expect(eventOf(chatMember(member(5, 'member'), admin(5))).kind).toBe('ignored');
    expect(eventOf(chatMember(member(5, 'left'), member(5, 'kicked', { until_date: 0 }))).kind).toBe('ignored');
  });

  it('a join request, by its user', () => {
    const update = { update_id: 2, chat_join_request: { chat: { id: CHAT, type: 'supergroup' }, from: user(6), user_chat_id: 6, date: 1 } };
    expect(eventOf(update)).toStrictEqual({ kind: 'join_request', chatId: String(CHAT), userId: '6' });
  });

  it('the bot’s own status: null when it is an admin with both rights, else what it lacks', () => {
    const mine = (after: object, type = 'supergroup') => ({ update_id: 3, my_chat_member: { chat: { id: CHAT, type }, from: user(1), date: 1, old_chat_member: admin(9), new_chat_member: after } });
    expect(eventOf(mine(admin(9)))).toStrictEqual({ kind: 'bot_status', chatId: String(CHAT), error: null });
    expect(eventOf(mine(member(9, 'member')))).toMatchObject({ kind: 'bot_status', error: { code: 'bot_not_admin' } });
    expect(eventOf(mine(member(9, 'left')))).toMatchObject({ error: { code: 'bot_not_in_chat' } });
    expect(eventOf(mine(member(9, 'kicked', { until_date: 0 })))).toMatchObject({ error: { code: 'bot_kicked' } });
    // A user blocking the bot in private.
    expect(eventOf(mine(member(9, 'kicked'), 'private')).kind).toBe('ignored');
  });

  it('names the rights an admin bot lacks', () => {
    expect(botStatusError(admin(9, { can_invite_users: false }))).toStrictEqual({
      code: 'bot_missing_rights',
      message: 'The bot is an admin of this chat without the right to invite users (can_invite_users): grant it',
    });
    expect(botStatusError(admin(9, { can_invite_users: false, can_restrict_members: false }))?.message).toContain('invite users (can_invite_users) and ban users (can_restrict_members)');
    expect(botStatusError(member(9, 'creator'))).toBeNull();
  });

  it('other kinds, and malformed ones, are ignored', () => {
    for (const payload of [{ update_id: 4, message: { text: 'hi' } }, null, 'x', { chat_member: { chat: { id: 'x' } } }, { chat_join_request: { chat: { id: CHAT }, from: { id: 1.5 } } }]) {
      expect(eventOf(payload).kind, JSON.stringify(payload)).toBe('ignored');
    }
  });

  it('never throws, whatever a stored payload holds (the worker handles what the route let through, and what polling brought)', () => {
    const kind = fc.constantFrom('chat_member', 'my_chat_member', 'chat_join_request', 'message');
    const member = fc.record({ status: fc.oneof(fc.constantFrom('member', 'left', 'kicked', 'restricted', 'administrator', 'creator'), fc.jsonValue()), user: fc.jsonValue(), is_member: fc.jsonValue() }, { requiredKeys: [] });
    const changed = fc.record({ chat: fc.jsonValue(), from: fc.jsonValue(), old_chat_member: member, new_chat_member: member, invite_link: fc.jsonValue() }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.jsonValue(), kind, fc.oneof(changed, fc.jsonValue()), (any, k, inner) => {
        for (const payload of [any, { update_id: 1, [k]: inner }]) {
          const event = eventOf(payload);
          lookupOf(event);
          for (const context of [ctx(), ctx({ user: granted('synced'), invite: linkOf('5'), inviteOwner: granted() })]) planOf(event, context);
        }
      }),
      { seed: 20261123, numRuns: 500 },
    );
  });

  it('asks the database about the chat, the user and the link the event names', () => {
    expect(lookupOf({ kind: 'join', chatId: '1', userId: '2', inviteLink: LINK })).toStrictEqual({ chatId: '1', userId: '2', inviteLink: LINK });
    expect(lookupOf({ kind: 'bot_status', chatId: '1', error: null })).toStrictEqual({ chatId: '1', userId: null, inviteLink: null });
    expect(lookupOf({ kind: 'ignored', reason: 'x' })).toBeNull();
  });
});

describe('planOf: what an update needs', () => {
  const join = (userId: string, inviteLink: string | null = LINK) => ({ kind: 'join' as const, chatId: String(CHAT), userId, inviteLink });

  it('a member through their own link: the link used, their row joined; no call', () => {
    expect(planOf(join('5'), ctx({ user: granted(), invite: linkOf('5'), inviteOwner: granted() }))).toStrictEqual({
      targetId: TARGET,
      calls: [],
      effects: { link: { inviteLink: LINK, usedBy: '5', revoked: false }, joined: { targetId: TARGET, userId: '5' } },
      note: 'joined through their own link',
    });
    // Access revoked meanwhile: joined too (the row goes pending and the worker removes them).
    expect(planOf(join('5'), ctx({ user: revoked, invite: linkOf('5') })).effects.joined).toStrictEqual({ targetId: TARGET, userId: '5' });
  });

  it('a stranger through a member’s link: kicked (ban, unban only if banned), the link revoked, the member relinked', () => {
    const plan = planOf(join('666'), ctx({ invite: linkOf('5'), inviteOwner: granted() }));
    expect(plan.calls).toStrictEqual([
      // A short ban (it lifts itself should the unban not come), lifted at once.
      { method: 'banChatMember', chatId: String(CHAT), userId: '666', banSeconds: KICK_BAN_SECONDS },
      { method: 'unbanChatMember', chatId: String(CHAT), userId: '666' },
      { method: 'revokeChatInviteLink', chatId: String(CHAT), inviteLink: LINK },
    ]);
    expect(plan.effects).toStrictEqual({
      link: { inviteLink: LINK, usedBy: '666', revoked: true },
      relink: { targetId: TARGET, userId: '5', error: INVITE_MISUSED },
    });
  });

  it('a stranger banned from the project stays banned in the chat; a member whose access ended is not relinked', () => {
    const plan = planOf(join('666'), ctx({ user: revoked, userBanned: true, invite: linkOf('5'), inviteOwner: revoked }));
    expect(plan.calls).toStrictEqual([
      { method: 'banChatMember', chatId: String(CHAT), userId: '666', banSeconds: null },
      { method: 'revokeChatInviteLink', chatId: String(CHAT), inviteLink: LINK },
    ]);
    expect(plan.effects.relink).toBeUndefined();
  });

  it('another member with access of their own through someone’s link: stays, but the link is revoked and its member relinked', () => {
    const plan = planOf(join('7'), ctx({ user: granted(), invite: linkOf('5'), inviteOwner: granted() }));
    expect(plan.calls.map((c) => c.method)).toStrictEqual(['revokeChatInviteLink']);
    expect(plan.effects).toMatchObject({ joined: { targetId: TARGET, userId: '7' }, relink: { userId: '5' }, link: { usedBy: '7', revoked: true } });
  });

  it('a link of another chat is no link for this one', () => {
    const plan = planOf(join('666'), ctx({ invite: { ...linkOf('5'), chatId: '-100999' }, inviteOwner: granted() }));
    expect(plan).toMatchObject({ calls: [], effects: {} });
  });

  it('no tenure link: a member with access is joined, anyone else is left alone (an admin may add people)', () => {
    expect(planOf(join('5', null), ctx({ user: granted() })).effects).toStrictEqual({ joined: { targetId: TARGET, userId: '5' } });
    expect(planOf(join('6', null), ctx({ user: revoked }))).toMatchObject({ calls: [], effects: {} });
    expect(planOf(join('6', 'https://t.me/+another_admins_link'), ctx())).toMatchObject({ calls: [], effects: {} });
  });

  it('a link of tenure’s making that was never recorded (a crash between making and writing it): whoever came through it without access is removed; the link revoked', () => {
    const unrecorded = { ...join('666'), linkFor: '5' };
    expect(planOf(unrecorded, ctx())).toMatchObject({
      calls: [
        { method: 'banChatMember', userId: '666', banSeconds: KICK_BAN_SECONDS },
        { method: 'unbanChatMember', userId: '666' },
        { method: 'revokeChatInviteLink', inviteLink: LINK },
      ],
      effects: {},
    });
    // Its own member with access stays (joined); the link is revoked all the same.
    const own = planOf({ ...join('5'), linkFor: '5' }, ctx({ user: granted() }));
    expect(own.calls.map((c) => c.method)).toStrictEqual(['revokeChatInviteLink']);
    expect(own.effects).toStrictEqual({ joined: { targetId: TARGET, userId: '5' } });
  });

  it('reads whose link of tenure’s making it was from its name, only when the link comes whole', () => {
    const named = (link: string, name?: string) => ({ invite_link: { ...viaLink(link).invite_link, ...(name === undefined ? {} : { name }) } });
    const joinVia = (extra: Record<string, unknown>) => eventOf(chatMember(member(6, 'left'), member(6, 'member'), extra));
    expect(joinVia(named(LINK, 'm:1a2b3c4d u:5'))).toMatchObject({ kind: 'join', inviteLink: LINK, linkFor: '5' });
    expect(joinVia(named(LINK, 'u:5'))).toMatchObject({ linkFor: '5' });
    expect(joinVia(named(LINK, 'VIP friends'))).not.toHaveProperty('linkFor');
    expect(joinVia(named('https://t.me/+AbCdEf…', 'm:1a2b3c4d u:5'))).not.toHaveProperty('linkFor');
  });

  it('a leave of a synced member with access: waiting for them; anyone else: nothing', () => {
    const leave = (userId: string) => ({ kind: 'leave' as const, chatId: String(CHAT), userId });
    expect(planOf(leave('5'), ctx({ user: granted('synced') })).effects).toStrictEqual({ left: { targetId: TARGET, userId: '5', error: LEFT_CHAT } });
    expect(planOf(leave('5'), ctx({ user: granted('pending') })).effects).toStrictEqual({});
    expect(planOf(leave('6'), ctx({ user: revoked })).effects).toStrictEqual({});
  });

  it('a join request: approved with desired granted there, declined otherwise; a chat of no target is left to its admins', () => {
    const request = (userId: string) => ({ kind: 'join_request' as const, chatId: String(CHAT), userId });
    expect(planOf(request('5'), ctx({ user: granted() })).calls).toStrictEqual([{ method: 'approveChatJoinRequest', chatId: String(CHAT), userId: '5' }]);
    expect(planOf(request('6'), ctx({ user: revoked })).calls).toStrictEqual([{ method: 'declineChatJoinRequest', chatId: String(CHAT), userId: '6' }]);
    expect(planOf(request('7'), ctx()).calls).toStrictEqual([{ method: 'declineChatJoinRequest', chatId: String(CHAT), userId: '7' }]);
    expect(planOf(request('5'), ctx({ target: null })).calls).toStrictEqual([]);
  });

  it('the bot’s status: a fault flags the target; full rights heal an unhealthy one, and change nothing on a healthy one', () => {
    const error = { code: 'bot_not_admin', message: 'm' };
    expect(planOf({ kind: 'bot_status', chatId: String(CHAT), error }, ctx()).effects).toStrictEqual({ targetFault: { targetId: TARGET, error } });
    expect(planOf({ kind: 'bot_status', chatId: String(CHAT), error: null }, ctx({ target: { id: TARGET, healthy: false } })).effects).toStrictEqual({ targetHealed: { targetId: TARGET } });
    expect(planOf({ kind: 'bot_status', chatId: String(CHAT), error: null }, ctx()).effects).toStrictEqual({});
  });
});

describe('outcomeOf and effectsAfter: what the calls came to', () => {
  const failure = (kind: TelegramFailure['kind'], description = ''): TelegramFailure =>
    kind === 'rate_limited' ? { kind, code: '429', description, retryAfterSeconds: 3 } : { kind, code: '400', description };
  const call = (method: TelegramCall['method']): TelegramCall => {
    if (method === 'revokeChatInviteLink') return { method, chatId: '1', inviteLink: LINK };
    if (method === 'banChatMember') return { method, chatId: '1', userId: '5', banSeconds: KICK_BAN_SECONDS };
    return { method, chatId: '1', userId: '5' };
  };
  const outcome = (c: TelegramCall, f: TelegramFailure) => outcomeOf(c, f).outcome;

  it('reads what was done already as done', () => {
    expect(outcome(call('approveChatJoinRequest'), failure('bad_request', 'Bad Request: HIDE_REQUESTER_MISSING'))).toBe('done');
    expect(outcome(call('approveChatJoinRequest'), failure('bad_request', 'Bad Request: USER_ALREADY_PARTICIPANT'))).toBe('done');
    expect(outcome(call('declineChatJoinRequest'), failure('bad_request', 'Bad Request: HIDE_REQUESTER_MISSING'))).toBe('done');
    expect(outcome(call('revokeChatInviteLink'), failure('bad_request', 'Bad Request: INVITE_HASH_EXPIRED'))).toBe('done');
  });

  it('a chat the bot cannot act in is a fault; a call that cannot be made is refused; a passing failure is retried', () => {
    expect(outcome(call('banChatMember'), failure('forbidden', 'Forbidden: bot was kicked from the supergroup chat'))).toBe('fault');
    expect(outcome(call('banChatMember'), failure('bad_request', 'Bad Request: not enough rights to restrict/unrestrict chat member'))).toBe('fault');
    expect(outcome(call('revokeChatInviteLink'), failure('bad_request', 'Bad Request: chat not found'))).toBe('fault');
    expect(outcome(call('banChatMember'), failure('bad_request', 'Bad Request: user is an administrator of the chat'))).toBe('refused');
    expect(outcome(call('banChatMember'), failure('bad_request', 'Bad Request: HIDE_REQUESTER_MISSING'))).toBe('refused');
    for (const kind of ['rate_limited', 'server', 'network', 'timeout'] as const) expect(outcome(call('banChatMember'), failure(kind))).toBe('retry');
    expect(outcome(call('banChatMember'), failure('unauthorized'))).toBe('unauthorized');
  });

  it('words a fault as the worker does, with what the owner must fix', () => {
    expect(outcomeOf(call('banChatMember'), { kind: 'forbidden', code: '403', description: 'Forbidden: bot was kicked from the supergroup chat' })).toStrictEqual({
      outcome: 'fault',
      error: { code: '403', message: expect.stringMatching(/^Forbidden: bot was kicked from the supergroup chat: the bot was removed from the chat: add it back/) },
    });
  });

  const intruder = planOf(
    { kind: 'join', chatId: String(CHAT), userId: '666', inviteLink: LINK },
    ctx({ invite: linkOf('5'), inviteOwner: granted() }),
  );

  it('writes everything when every call was made', () => {
    expect(effectsAfter(intruder, ['done', 'done', 'done'], null)).toStrictEqual(intruder.effects);
  });

  it('does not mark a link revoked that was not', () => {
    expect(effectsAfter(intruder, ['refused', 'done', 'refused'], null).link).toStrictEqual({ inviteLink: LINK, usedBy: '666', revoked: false });
  });

  it('after a fault: the target flagged, no relink (nothing can be made there), the link not marked revoked', () => {
    const fault = { code: '403', message: 'Forbidden: bot is not a member of the supergroup chat' };
    expect(effectsAfter(intruder, ['fault', undefined, undefined], fault)).toStrictEqual({
      link: { inviteLink: LINK, usedBy: '666', revoked: false },
      targetFault: { targetId: TARGET, error: fault },
    });
  });
});
