import type { ChatMember } from 'grammy/types';
import type { AccessError, ClaimedAccess } from '../../store/access-worker.store.js';
import type { TelegramInvite } from '../../store/telegram-invites.store.js';
import type { CallResult } from '../connector.js';
import type { TelegramFailure } from './api.js';

/**
 * What one Telegram access row needs and what Telegram's answers mean for it (docs/access-telegram.md), pure: the calls themselves are made in telegram.connector.ts. A bot cannot add
 * anyone to a chat; it can only hand out a way in (an invite link for that member alone) and put
 * people out (a ban, lifted at once unless the member is banned from the project: Telegram's
 * "kick").
 */

export type TelegramRow = Pick<ClaimedAccess, 'kind' | 'externalId' | 'userId' | 'desired' | 'onExpiry' | 'membershipId' | 'banned'>;
export type InviteMode = 'single_use' | 'join_request';

/** The kinds of target the connector applies: a group (supergroup) or a channel, by its chat id. */
export const TELEGRAM_KINDS: ReadonlySet<string> = new Set(['group', 'channel']);

/** A chat id as the Bot API takes it: a number, or a public `@username` as it is. */
export const chatIdOf = (externalId: string): number | string => (/^-?\d+$/.test(externalId) ? Number(externalId) : externalId);

/** A Telegram user id (a positive integer below 2^53), or null when `userId` is not one. */
export function telegramUserId(userId: string): number | null {
  if (!/^\d{1,16}$/.test(userId)) return null;
  const id = Number(userId);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** In the chat now: owner, admin, member, or restricted but still a member (docs: ChatMemberRestricted.is_member). */
export function isInChat(member: ChatMember): boolean {
  switch (member.status) {
    case 'creator':
    case 'administrator':
    case 'member':
      return true;
    case 'restricted':
      return member.is_member;
    default:
      return false;
  }
}

/**
 * A grant after `getChatMember`: already in → `synced`; banned in the chat (`kicked`) → lift that
 * ban first (`unban_then_invite`; tenure's own kick of an earlier membership, or an admin's: the
 * project's ban list decides who is kept out, docs/access.md), then invite; otherwise `invite`.
 */
export function grantStep(member: ChatMember): 'synced' | 'unban_then_invite' | 'invite' {
  if (isInChat(member)) return 'synced';
  return member.status === 'kicked' ? 'unban_then_invite' : 'invite';
}

/** A kick after `getChatMember`: not in → `gone`; the owner or an admin → `untouchable` (only who promoted them could); else `kick`. */
export function kickStep(member: ChatMember): 'gone' | 'untouchable' | 'kick' {
  if (!isInChat(member)) return 'gone';
  return member.status === 'creator' || member.status === 'administrator' ? 'untouchable' : 'kick';
}

/**
 * The ban of a kick lasts this long unless the unban right after it lifts it: should that unban
 * not happen (a 429, a crash between the two calls), the member is not kept out for good. Telegram
 * takes under 30 s as forever (docs: banChatMember until_date), so well above that, and short
 * enough that a member who paid again meanwhile is let in by the grant's own unban anyway.
 */
export const KICK_BAN_SECONDS = 120;

/** A current link is handed out again while more than this share of its lifetime is left. */
export const REUSE_MIN_LEFT = 0.1;

/**
 * The member's current link worth handing out again instead of making another: made by this bot
 * (only it can revoke it), of the configured kind, with more than 10% of its lifetime left.
 * `current` is newest first (TelegramInvitesStore.current).
 */
export function reusableInvite(
  current: readonly TelegramInvite[],
  o: { botId: string; mode: InviteMode; ttlMs: number; now: Date },
): TelegramInvite | null {
  return (
    current.find(
      (i) => i.botId === o.botId && i.createsJoinRequest === (o.mode === 'join_request') && i.expiresAt.getTime() - o.now.getTime() > o.ttlMs * REUSE_MIN_LEFT,
    ) ?? null
  );
}

/** Telegram cuts an invite link's name at 32 characters (docs: createChatInviteLink). */
export const INVITE_NAME_MAX = 32;

/** `m:<first 8 of the membership id> u:<user id>`: the owner sees in the chat's links whose link it is. */
export function inviteName(row: Pick<TelegramRow, 'membershipId' | 'userId'>): string {
  const name = row.membershipId ? `m:${row.membershipId.slice(0, 8)} u:${row.userId}` : `u:${row.userId}`;
  return name.slice(0, INVITE_NAME_MAX);
}

export interface InviteRequest {
  name: string;
  /** Unix seconds (the link's `expire_date`). */
  expire_date: number;
  member_limit?: number;
  creates_join_request?: boolean;
}

/**
 * The link for one member: single-use (`member_limit` 1: one person joins through it) or a
 * join-request link (whose requests the bot approves for this member only); both expire after the
 * configured lifetime. A join-request link cannot carry a member limit (docs).
 */
export function inviteRequest(row: Pick<TelegramRow, 'membershipId' | 'userId'>, o: { mode: InviteMode; ttlMs: number; now: Date }): InviteRequest {
  const expire_date = Math.floor((o.now.getTime() + o.ttlMs) / 1000);
  const kind = o.mode === 'join_request' ? { creates_join_request: true } : { member_limit: 1 };
  return { name: inviteName(row), expire_date, ...kind };
}

export const INVITE_SENT: AccessError = { code: 'invite_sent', message: 'waiting for the member to join with their invite link' };

export const TELEGRAM_TOKEN_REFUSED: AccessError = {
  code: 'unauthorized',
  message: 'Telegram refused the bot token (401 Unauthorized): get a new token from @BotFather and connect the bot again',
};

/** The held-back grant of a member banned from the project (the planner revokes it; no link is made meanwhile). */
export const BANNED_MEMBER: AccessError = { code: 'banned', message: 'the member is banned from the project: no invite link is made' };

const RIGHTS = 'make the bot an admin of the chat with the rights “Invite users via link” and “Ban users”';

/** What the owner must fix, for each refusal that is the chat's (the target is flagged unhealthy, no retry loop). */
function targetFaultHint(f: TelegramFailure): string | null {
  const d = f.description;
  if (f.kind === 'forbidden') {
    if (/kicked/i.test(d)) return `the bot was removed from the chat: add it back, then ${RIGHTS}`;
    if (/not a member/i.test(d)) return `the bot is not in the chat: add it, then ${RIGHTS}`;
    return RIGHTS;
  }
  if (f.kind !== 'bad_request') return null;
  if (f.migrateToChatId !== undefined) return `the group became a supergroup: set the target's external_id to ${f.migrateToChatId}`;
  if (/not enough rights/i.test(d)) {
    if (/invite link|join request/i.test(d)) return 'give the bot the admin right “Invite users via link”';
    if (/restrict/i.test(d)) return 'give the bot the admin right “Ban users”';
    return RIGHTS;
  }
  if (/chat not found/i.test(d)) return "the chat does not exist or the bot cannot see it: check the target's external_id (the chat id, like -1001234567890) and add the bot to the chat";
  if (/supergroup and channel chats only/i.test(d)) return 'a basic group cannot let a removed member back in: make it a supergroup';
  return null;
}

/**
 * What a failed call means for the row. `unauthorized`: the token is dead, the bot is flagged;
 * `rate_limited`: retry when Telegram said (the engine holds the chat back until then); the chat's
 * refusals (403, not enough rights, chat not found…): failed, the target flagged, with what to fix;
 * about this member only (the owner or an admin cannot be removed, an unknown user): failed, the
 * target is fine; the rest (5xx, no answer, a timeout): retry on the schedule.
 */
export function resultOfFailure(f: TelegramFailure, row: Pick<TelegramRow, 'desired'>): CallResult {
  const error = { code: f.code, message: f.description };
  switch (f.kind) {
    case 'unauthorized':
      return { outcome: 'unauthorized', error: TELEGRAM_TOKEN_REFUSED };
    case 'rate_limited':
      return { outcome: 'retry', error, retryAfterMs: f.retryAfterSeconds * 1000 };
    case 'server':
    case 'network':
    case 'timeout':
      return { outcome: 'retry', error };
    case 'forbidden':
    case 'bad_request': {
      const hint = targetFaultHint(f);
      if (hint) return { outcome: 'failed', targetFault: true, error: { ...error, message: `${f.description}: ${hint}` } };
      if (/can't remove chat owner|is an administrator of the chat/i.test(f.description)) {
        return { outcome: 'failed', targetFault: false, error: { ...error, message: `${f.description}: tenure cannot remove the chat's owner or an admin; demote them first` } };
      }
      // No such user on Telegram: nobody to hold anything there, which is what a revoke wants.
      if (/user not found/i.test(f.description)) {
        if (row.desired === 'revoked') return { outcome: 'applied' };
        return { outcome: 'failed', targetFault: false, error: { ...error, message: `${f.description}: the user_id is not a Telegram user the bot can see (it must be the member's Telegram user id)` } };
      }
      return { outcome: 'failed', targetFault: false, error };
    }
  }
}

/** A revoke of a link Telegram no longer knows as live (revoked, expired, or never the bot's): nothing left to revoke. */
export const isGoneLink = (f: TelegramFailure): boolean => f.kind === 'bad_request' && /INVITE_HASH_EXPIRED/i.test(f.description);

/** The row the owner cannot fix by waiting: the member is the chat's owner or an admin. */
export const CHAT_ADMIN: AccessError = {
  code: 'chat_admin',
  message: "the member is the chat's owner or an admin: tenure cannot remove them; demote them first",
};
