import type { ApiClientOptions } from 'grammy';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import type { ClaimedAccess } from '../../store/access-worker.store.js';
import type { TelegramInvitesStore } from '../../store/telegram-invites.store.js';
import type { BotIdentity, CallResult, PlatformConnector } from '../connector.js';
import { grammy, telegramFailure } from './api.js';
import { closeTelegramClient, createTelegramClient, grammySignal, type TelegramClient, type TelegramPaceOptions } from './client.js';
import {
  BANNED_MEMBER,
  CHAT_ADMIN,
  chatIdOf,
  grantStep,
  INVITE_SENT,
  inviteRequest,
  isGoneLink,
  kickStep,
  KICK_BAN_SECONDS,
  resultOfFailure,
  reusableInvite,
  TELEGRAM_KINDS,
  telegramUserId,
  type InviteMode,
} from './telegram-decisions.js';

/**
 * Telegram for the access engine (docs/access-telegram.md): one paced Bot API client per bot
 * held (client.ts); one row's change is a few calls, decided in telegram-decisions.ts:
 *
 * | desired | calls                                                                                     | outcome            |
 * |---------|-------------------------------------------------------------------------------------------|--------------------|
 * | granted | getChatMember: in the chat                                                                | applied (synced)   |
 * | granted | getChatMember: banned there → unbanChatMember(only_if_banned); then the member's current  | waiting_for_member |
 * |         | link if it has > 10% of its lifetime left, else createChatInviteLink, recorded with its   |                    |
 * |         | access.invite-created event                                                               |                    |
 * | revoked | revokeChatInviteLink for each of the member's live links; on_expiry `none`: nothing more  | unchanged          |
 * | revoked | `kick`: getChatMember; in the chat → banChatMember, then unbanChatMember(only_if_banned)  | applied            |
 * |         | unless the member is banned from the project (then they stay banned in the chat)         |                    |
 *
 * Every Telegram call goes through grammY; a failure is described by `telegramFailure`, never
 * logged raw (its URL holds the token).
 */

export interface TelegramConnectorDeps {
  /** TENURE_TELEGRAM_API_URL. */
  apiUrl: string;
  /** TENURE_TELEGRAM_PER_SECOND and _CHAT_PER_SECOND. */
  pace: TelegramPaceOptions;
  /** TENURE_TELEGRAM_INVITE_MODE. */
  inviteMode: InviteMode;
  /** TENURE_TELEGRAM_INVITE_TTL_SECONDS, in ms. */
  inviteTtlMs: number;
  invites: TelegramInvitesStore;
  clock: Clock;
  logger: Logger;
  /** grammY's client options (its timeout), for tests. */
  api?: Omit<ApiClientOptions, 'apiRoot' | 'sensitiveLogs'>;
}

/** Telegram for the access engine: every connected bot is held (its holder receives its updates). */
export function telegramConnector(deps: TelegramConnectorDeps): PlatformConnector<TelegramClient> {
  return {
    platform: 'telegram',
    label: 'Telegram',
    holdAlways: true,
    load: async () => void (await grammy.load()),
    createClient: (token) => createTelegramClient(token, deps.apiUrl, deps.pace, deps.api),
    closeClient: closeTelegramClient,
    apply: (client, row, signal, bot) => applyOnTelegram(deps, client, row, signal, bot),
    // No bucket waits to match calls with: the client paces itself, and a 429 holds the chat back.
    pathOf: () => null,
  };
}

/** Makes the row's calls with the bot's client and says what they came to; never throws. */
export async function applyOnTelegram(
  deps: TelegramConnectorDeps,
  api: TelegramClient,
  row: ClaimedAccess,
  signal: AbortSignal,
  bot: BotIdentity,
): Promise<CallResult> {
  if (!TELEGRAM_KINDS.has(row.kind)) {
    return { outcome: 'failed', targetFault: true, error: { code: 'unsupported_target', message: `a Telegram ${row.kind} target cannot be applied (groups and channels only)` } };
  }
  const userId = telegramUserId(row.userId);
  if (userId === null) {
    return { outcome: 'failed', targetFault: false, error: { code: 'invalid_user_id', message: 'a Telegram user id is a positive number: this user_id is not one' } };
  }
  if (signal.aborted) return { outcome: 'aborted' };
  const call = { deps, api, row, signal: grammySignal(signal), bot, chatId: chatIdOf(row.externalId), userId };
  try {
    return row.desired === 'granted' ? await grant(call) : await revoke(call);
  } catch (err) {
    if (signal.aborted) return { outcome: 'aborted' };
    if (err instanceof StoreError) return { outcome: 'retry', error: { code: 'storage', message: err.message } };
    return resultOfFailure(telegramFailure(err), row);
  }
}

interface RowCall {
  deps: TelegramConnectorDeps;
  api: TelegramClient;
  row: ClaimedAccess;
  signal: ReturnType<typeof grammySignal>;
  bot: BotIdentity;
  chatId: number | string;
  userId: number;
}

/** tenure's own storage failed around the calls: retried on the schedule like any passing failure. */
class StoreError extends Error {}

async function stored<T>(c: RowCall, what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    c.deps.logger.error({ err, projectId: c.bot.projectId, targetId: c.row.targetId }, `access: ${what} failed`);
    throw new StoreError(`${what} failed; tried again`);
  }
}

async function grant(c: RowCall): Promise<CallResult> {
  const { deps, api, row } = c;
  // Planned granted, yet banned by now: the re-plan revokes it; no way in meanwhile.
  if (row.banned) return { outcome: 'retry', error: BANNED_MEMBER };
  const step = grantStep(await api.getChatMember(c.chatId, c.userId, c.signal));
  if (step === 'synced') return { outcome: 'applied' };
  if (step === 'unban_then_invite') await api.unbanChatMember(c.chatId, c.userId, { only_if_banned: true }, c.signal);

  const now = deps.clock.now();
  const current = await stored(c, "reading the member's invite links", () => deps.invites.current(c.bot.projectId, row.targetId, row.userId, now));
  if (reusableInvite(current, { botId: c.bot.botId, mode: deps.inviteMode, ttlMs: deps.inviteTtlMs, now })) return { outcome: 'waiting_for_member', error: INVITE_SENT };

  const request = inviteRequest(row, { mode: deps.inviteMode, ttlMs: deps.inviteTtlMs, now });
  const link = await api.createChatInviteLink(c.chatId, request, c.signal);
  try {
    await stored(c, 'recording an invite link', () =>
      deps.invites.record({
        projectId: c.bot.projectId,
        targetId: row.targetId,
        userId: row.userId,
        membershipId: row.membershipId,
        chatId: row.externalId,
        botId: c.bot.botId,
        inviteLink: link.invite_link,
        name: request.name,
        createsJoinRequest: link.creates_join_request,
        expiresAt: new Date(request.expire_date * 1000),
        createdAt: now,
      }),
    );
  } catch (err) {
    // A link nobody will be told of must not stay open: revoked at once, as far as that goes.
    await api.revokeChatInviteLink(c.chatId, link.invite_link, c.signal).catch(() => undefined);
    throw err;
  }
  return { outcome: 'waiting_for_member', error: INVITE_SENT };
}

async function revoke(c: RowCall): Promise<CallResult> {
  const { deps, api, row } = c;
  // Used links too: a single-use link counts members still in, so it opens again once they are out.
  const live = await stored(c, "reading the member's invite links", () => deps.invites.live(c.bot.projectId, row.targetId, row.userId, deps.clock.now()));
  const revoked: string[] = [];
  try {
    // Another bot's links (before a reconnection with a new bot) only that bot could revoke.
    for (const link of live.filter((l) => l.botId === c.bot.botId)) {
      try {
        await api.revokeChatInviteLink(c.chatId, link.inviteLink, c.signal);
      } catch (err) {
        if (!isGoneLink(telegramFailure(err))) throw err;
      }
      revoked.push(link.id);
    }
  } finally {
    // Unmarked on a failure here, they are revoked again next time (Telegram answers that as gone).
    if (revoked.length > 0) await deps.invites.markRevoked(revoked, deps.clock.now()).catch((err: unknown) => deps.logger.error({ err, projectId: c.bot.projectId }, 'access: marking invite links revoked failed'));
  }
  if (row.onExpiry !== 'kick') return { outcome: 'unchanged' };

  const step = kickStep(await api.getChatMember(c.chatId, c.userId, c.signal));
  if (step === 'gone') return { outcome: 'applied' };
  if (step === 'untouchable') return { outcome: 'failed', targetFault: false, error: CHAT_ADMIN };
  // A member banned from the project stays banned in the chat; anyone else may come back after paying.
  const until = row.banned ? {} : { until_date: Math.floor(deps.clock.now().getTime() / 1000) + KICK_BAN_SECONDS };
  await api.banChatMember(c.chatId, c.userId, until, c.signal);
  if (!row.banned) await api.unbanChatMember(c.chatId, c.userId, { only_if_banned: true }, c.signal);
  return { outcome: 'applied' };
}
