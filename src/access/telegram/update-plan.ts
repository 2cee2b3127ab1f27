import type { ChatMember } from 'grammy/types';
import type { AccessError } from '../../store/access-worker.store.js';
import type { UpdateContext } from '../../store/telegram-updates.store.js';
import type { UpdateEffects } from '../../domain/access/telegram-update-effects.js';
import type { TelegramFailure } from './api.js';
import { rightsOf } from './chat-rights.js';
import { KICK_BAN_SECONDS, resultOfFailure } from './telegram-decisions.js';

/**
 * What a bot's update means for access (docs/access-telegram.md: joins, leaves, join
 * requests), decided without side effects: what the update says (`eventOf`), which Bot API calls
 * it needs and what it writes (`planOf`), what a failed call means (`outcomeOf`), and what is
 * written once the calls are made (`effectsAfter`). updates.ts makes the calls and the write.
 */

/** What an update says, as tenure reads it; ids as text, as the access rows hold them. */
export type UpdateEvent =
  /**
   * A user came into the chat, through `inviteLink` when Telegram says which (it does not always).
   * `linkFor`: the user a link of tenure's making was named for (`… u:<user id>`), when the link
   * comes whole (the bot's own) and carries that name; set even if tenure never recorded the link.
   */
  | { kind: 'join'; chatId: string; userId: string; inviteLink: string | null; linkFor?: string }
  /** A user left the chat or was removed from it. */
  | { kind: 'leave'; chatId: string; userId: string }
  | { kind: 'join_request'; chatId: string; userId: string }
  /** The bot's own status in a chat changed: `error` says what it can no longer do, null when it can do all. */
  | { kind: 'bot_status'; chatId: string; error: AccessError | null }
  | { kind: 'ignored'; reason: string };

export type TelegramCall =
  /** `banSeconds`: the ban lifts itself after that long (null: for good). */
  | { method: 'banChatMember'; chatId: string; userId: string; banSeconds: number | null }
  | { method: 'unbanChatMember' | 'approveChatJoinRequest' | 'declineChatJoinRequest'; chatId: string; userId: string }
  | { method: 'revokeChatInviteLink'; chatId: string; inviteLink: string };

export interface UpdatePlan {
  /** The chat's target (null: not a chat of tenure's, nothing to do). */
  targetId: string | null;
  /** Made in order, before the effects are written. */
  calls: TelegramCall[];
  /** Written with the update's handled mark, if every call is made. */
  effects: UpdateEffects;
  /** What happened, for the log. */
  note: string;
}

export const INVITE_MISUSED: AccessError = {
  code: 'invite_misused',
  message: "Someone else joined the chat with this member's invite link: they were removed and the link revoked; a new link is made for the member",
};

export const LEFT_CHAT: AccessError = {
  code: 'left_chat',
  message: 'The member left the chat (or an admin removed them); drift repair gives them a fresh invite link',
};

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const idOf = (v: unknown): string | null => {
  const id = obj(v)?.id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : null;
};

/** In the chat: an owner, an admin, a member, or restricted while still a member (ChatMemberRestricted.is_member). */
export function isInChat(member: Json): boolean {
  const status = member.status;
  return status === 'creator' || status === 'administrator' || status === 'member' || (status === 'restricted' && member.is_member === true);
}

/**
 * What the bot cannot do in a chat, from its ChatMember there: tenure needs an admin that can
 * invite users (links, join requests) and restrict members (the kick); null when it can do both.
 */
export function botStatusError(member: Json): AccessError | null {
  const rights = rightsOf(member as unknown as ChatMember);
  if (rights.isAdmin && rights.canInviteUsers === true && rights.canRestrictMembers === true) return null;
  if (rights.error) return rights.error;
  if (!rights.isAdmin) {
    return { code: 'bot_not_admin', message: 'The bot is no longer an admin of this chat: make it an admin that can invite users and ban users' };
  }
  const missing = [rights.canInviteUsers !== true && 'invite users (can_invite_users)', rights.canRestrictMembers !== true && 'ban users (can_restrict_members)'].filter(Boolean);
  return { code: 'bot_missing_rights', message: `The bot is an admin of this chat without the right to ${missing.join(' and ')}: grant it` };
}

/** What an update (the Update object as stored) says. Kinds tenure does not ask for, and malformed ones, are `ignored`. */
export function eventOf(payload: unknown): UpdateEvent {
  const update = obj(payload) ?? {};
  const changed = obj(update.chat_member);
  if (changed) {
    const [chatId, before, after] = [idOf(changed.chat), obj(changed.old_chat_member), obj(changed.new_chat_member)];
    const userId = idOf(after?.user);
    if (!chatId || !before || !after || !userId) return { kind: 'ignored', reason: 'a malformed chat_member update' };
    const invite = obj(changed.invite_link);
    const link = typeof invite?.invite_link === 'string' ? invite.invite_link : null;
    if (!isInChat(before) && isInChat(after)) {
      // Another bot's or admin's link comes cut short ("…"); the bot's own comes whole, with its name.
      const named = link !== null && !link.includes('…') && typeof invite?.name === 'string' ? /(?:^|\s)u:(\d+)$/.exec(invite.name) : null;
      return { kind: 'join', chatId, userId, inviteLink: link, ...(named ? { linkFor: named[1]! } : {}) };
    }
    if (isInChat(before) && !isInChat(after)) return { kind: 'leave', chatId, userId };
    return { kind: 'ignored', reason: 'a change of a member that neither joined nor left' };
  }
  const request = obj(update.chat_join_request);
  if (request) {
    const [chatId, userId] = [idOf(request.chat), idOf(request.from)];
    if (!chatId || !userId) return { kind: 'ignored', reason: 'a malformed chat_join_request update' };
    return { kind: 'join_request', chatId, userId };
  }
  const mine = obj(update.my_chat_member);
  if (mine) {
    const [chatId, after] = [idOf(mine.chat), obj(mine.new_chat_member)];
    if (!chatId || !after) return { kind: 'ignored', reason: 'a malformed my_chat_member update' };
    // A user blocking or starting the bot in a private chat: nothing to do with the chats tenure manages.
    if (obj(mine.chat)?.type === 'private') return { kind: 'ignored', reason: 'the bot’s private chat with a user' };
    return { kind: 'bot_status', chatId, error: botStatusError(after) };
  }
  return { kind: 'ignored', reason: 'a kind of update tenure does not ask for' };
}

/** What `eventOf`'s event needs read from the database: the chat, the user and the link. */
export function lookupOf(event: UpdateEvent): { chatId: string; userId: string | null; inviteLink: string | null } | null {
  switch (event.kind) {
    case 'join':
      return { chatId: event.chatId, userId: event.userId, inviteLink: event.inviteLink };
    case 'leave':
    case 'join_request':
      return { chatId: event.chatId, userId: event.userId, inviteLink: null };
    case 'bot_status':
      return { chatId: event.chatId, userId: null, inviteLink: null };
    case 'ignored':
      return null;
  }
}

const nothing = (note: string, targetId: string | null = null): UpdatePlan => ({ targetId, calls: [], effects: {}, note });

/** The calls and the writes an update needs, given what the database holds (`ctx`). Pure. */
export function planOf(event: UpdateEvent, ctx: UpdateContext | null): UpdatePlan {
  if (event.kind === 'ignored') return nothing(`ignored: ${event.reason}`);
  const target = ctx?.target;
  // A chat tenure has no target for is the owner's own business (a join request there is left to its admins).
  if (!ctx || !target) return nothing('ignored: not a chat of a target');
  const granted = ctx.user?.desired === 'granted';
  switch (event.kind) {
    case 'join': {
      const { chatId, userId } = event;
      // The link is tenure's when the database knows its exact URL (another admin's comes cut short).
      const invite = event.inviteLink !== null && ctx.invite?.chatId === chatId ? { ...ctx.invite, inviteLink: event.inviteLink } : null;
      // Kicked as the connector kicks: a short ban lifted at once (it lifts itself should the unban
      // not come), except that a user banned from the project stays banned in the chat.
      const kick: TelegramCall[] = granted
        ? []
        : [
            { method: 'banChatMember', chatId, userId, banSeconds: ctx.userBanned ? null : KICK_BAN_SECONDS },
            ...(ctx.userBanned ? [] : [{ method: 'unbanChatMember' as const, chatId, userId }]),
          ];
      if (invite && invite.userId !== userId) {
        // Someone else's link (docs/access-telegram.md: someone joining through another member's link is removed).
        return {
          targetId: target.id,
          calls: [...kick, { method: 'revokeChatInviteLink', chatId, inviteLink: invite.inviteLink }],
          effects: {
            link: { inviteLink: invite.inviteLink, usedBy: userId, revoked: true },
            ...(granted ? { joined: { targetId: target.id, userId } } : {}),
            ...(ctx.inviteOwner?.desired === 'granted' ? { relink: { targetId: invite.targetId, userId: invite.userId, error: INVITE_MISUSED } } : {}),
          },
          note: granted ? 'joined through another member’s link, with access of their own: the link revoked' : 'joined through another member’s link: removed, the link revoked',
        };
      }
      if (invite) {
        return {
          targetId: target.id,
          calls: [],
          effects: { link: { inviteLink: invite.inviteLink, usedBy: userId, revoked: false }, ...(ctx.user ? { joined: { targetId: target.id, userId } } : {}) },
          note: 'joined through their own link',
        };
      }
      if (event.inviteLink !== null && event.linkFor !== undefined) {
        // A link of tenure's making that it never recorded: the process died between making it and
        // writing it down, so nobody was handed it. Whoever came through it keeps their place only
        // with access of their own; the link is revoked (Telegram cannot list a chat's links, so
        // this is the one chance to find it).
        return {
          targetId: target.id,
          calls: [...kick, { method: 'revokeChatInviteLink', chatId, inviteLink: event.inviteLink }],
          effects: granted ? { joined: { targetId: target.id, userId } } : {},
          note: granted ? 'joined through an unrecorded link of tenure’s, with access: the link revoked' : 'joined through an unrecorded link of tenure’s: removed, the link revoked',
        };
      }
      // No link of tenure's (an admin added them, or Telegram left the link out of a rejoin).
      if (granted) return { targetId: target.id, calls: [], effects: { joined: { targetId: target.id, userId } }, note: 'a member with access joined' };
      return nothing('a user without access joined without a tenure link: left alone', target.id);
    }
    case 'leave':
      if (granted && ctx.user?.state === 'synced') {
        return { targetId: target.id, calls: [], effects: { left: { targetId: target.id, userId: event.userId, error: LEFT_CHAT } }, note: 'a member with access left' };
      }
      return nothing('a user tenure does not keep in left', target.id);
    case 'join_request':
      return {
        targetId: target.id,
        calls: [{ method: granted ? 'approveChatJoinRequest' : 'declineChatJoinRequest', chatId: event.chatId, userId: event.userId }],
        effects: {},
        note: granted ? 'join request approved' : 'join request declined',
      };
    case 'bot_status':
      if (event.error) return { targetId: target.id, calls: [], effects: { targetFault: { targetId: target.id, error: event.error } }, note: `the bot lost its rights (${event.error.code})` };
      if (!target.healthy) return { targetId: target.id, calls: [], effects: { targetHealed: { targetId: target.id } }, note: 'the bot has its rights again' };
      return nothing('the bot keeps its rights', target.id);
  }
}

/**
 * What a failed call means for the update:
 * - `done`: what the call was for is true already (a request handled, a link revoked or expired);
 * - `fault`: the bot cannot act in the chat (not an admin, not enough rights, the chat gone):
 *   the target is flagged with what to fix, as the worker flags it, and the update is not retried;
 * - `refused`: this call cannot be made (an admin or the owner cannot be removed, the user is
 *   unknown): the rest of the update is handled;
 * - `retry`: a passing failure (429, 5xx, no answer): the update is handled again later;
 * - `unauthorized`: the token was refused.
 */
export type CallOutcome = 'done' | 'fault' | 'refused' | 'retry' | 'unauthorized';

const ALREADY: Readonly<Record<TelegramCall['method'], RegExp | null>> = {
  // HIDE_REQUESTER_MISSING: no such request (handled already, by us or an admin); USER_ALREADY_PARTICIPANT: in already.
  approveChatJoinRequest: /HIDE_REQUESTER_MISSING|USER_ALREADY_PARTICIPANT/,
  declineChatJoinRequest: /HIDE_REQUESTER_MISSING/,
  // The link is revoked or expired already: nobody joins through it any more.
  revokeChatInviteLink: /INVITE_HASH_EXPIRED/,
  banChatMember: null,
  unbanChatMember: null,
};

/**
 * The outcome of a failed call, and its error as the worker words it for a row (the connector's
 * `resultOfFailure`: a chat's refusal carries what the owner must fix), so the target's error
 * reads the same whichever of the two met it first.
 */
export function outcomeOf(call: TelegramCall, failure: TelegramFailure): { outcome: CallOutcome; error: AccessError } {
  const error = { code: failure.code, message: failure.description };
  if (failure.kind === 'bad_request' && ALREADY[call.method]?.test(failure.description)) return { outcome: 'done', error };
  const result = resultOfFailure(failure, { desired: 'revoked' });
  switch (result.outcome) {
    case 'unauthorized':
      return { outcome: 'unauthorized', error };
    case 'retry':
      return { outcome: 'retry', error };
    case 'failed':
      return { outcome: result.targetFault ? 'fault' : 'refused', error: result.error };
    default:
      // A user Telegram does not know: nobody to remove or let in.
      return { outcome: 'refused', error };
  }
}

/**
 * The effects to write once the calls are made (`outcomes[i]` of `plan.calls[i]`; a call after a
 * fault is not made: undefined). A link is marked revoked only if it was; when the bot cannot act
 * in the chat (`fault`) the target is flagged, and its member waiting for a fresh link is left
 * waiting (no link can be made there until the target is fixed).
 */
export function effectsAfter(plan: UpdatePlan, outcomes: readonly (CallOutcome | undefined)[], fault: AccessError | null): UpdateEffects {
  const effects: UpdateEffects = { ...plan.effects };
  const revoke = plan.calls.findIndex((c) => c.method === 'revokeChatInviteLink');
  if (effects.link && revoke >= 0 && outcomes[revoke] !== 'done') effects.link = { ...effects.link, revoked: false };
  if (fault && plan.targetId) {
    delete effects.relink;
    effects.targetFault = { targetId: plan.targetId, error: fault };
  }
  return effects;
}
