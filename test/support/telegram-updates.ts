import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import { createTelegramApi } from '../../src/access/telegram/api.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import { startTelegramUpdates, telegramUpdatesDeps, type TelegramUpdatesHandle } from '../../src/access/telegram/updates-runner.js';
import type { TelegramUpdatesOptions } from '../../src/access/telegram/updates.js';
import { rowsOf } from '../../src/database/db.js';
import { insertAccessRows, insertIntegration, type AccessSeed } from './access-seed.js';
import type { FakeTelegram } from './fake-telegram.js';
import type { Harness } from './harness.js';

/**
 * Seeds and looks for the Telegram update tests (storage and in-process): a connected Telegram
 * bot, chat targets, access rows and invite links as the planner and the connector would leave
 * them, by direct inserts; the bot's stored updates as they stand; and the updates' loops of a
 * Telegram access worker, started as the worker runtime starts them.
 */

/** Short pauses: a failed poll is tried again after 1 s at most (the jitter in the middle). */
export const TEST_UPDATES_OPTIONS: TelegramUpdatesOptions = { pollTimeoutSeconds: 25, inboxPollMs: 200, maxBackoffMs: 1000 };

/**
 * `listen(worker)`: the updates of the bots `worker` holds, received and handled in this process
 * (long polling, unless `mode` says webhook), stopped after each test, before its workers.
 */
export function useTelegramUpdates(
  h: Harness,
): (worker: AccessWorker<TelegramClient>, o?: { mode?: 'polling' | 'webhook'; webhookUrl?: string; options?: Partial<TelegramUpdatesOptions> }) => TelegramUpdatesHandle {
  const handles: TelegramUpdatesHandle[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((u) => u.stop()));
  });
  return (worker, o = {}) => {
    const handle = startTelegramUpdates(
      worker,
      { ...telegramUpdatesDeps(h.container), mode: o.mode ?? 'polling', webhookUrl: o.webhookUrl, random: () => 0.5 },
      { ...TEST_UPDATES_OPTIONS, ...o.options },
    );
    handles.push(handle);
    return handle;
  };
}

/**
 * Resolves once the bot's long poll has asked for the kinds tenure handles (the fake creates an
 * update of a kind only once asked for it: a join before that would never reach the bot).
 * Asked with getWebhookInfo a few times a second, well within the fake's limits.
 */
export async function untilPolling(telegram: FakeTelegram, bot: { token: string }, timeoutMs = 10_000): Promise<void> {
  const api = createTelegramApi(bot.token, telegram.url);
  const deadline = Date.now() + timeoutMs;
  while (!(await api.getWebhookInfo()).allowed_updates?.includes('chat_member')) {
    if (Date.now() > deadline) throw new Error(`the bot's getUpdates did not ask for chat_member within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Updates Telegram holds for the bot, unconfirmed (getWebhookInfo's pending_update_count). */
export async function pendingOnTelegram(telegram: FakeTelegram, bot: { token: string }): Promise<number> {
  return (await createTelegramApi(bot.token, telegram.url).getWebhookInfo()).pending_update_count;
}

const isoCol = (column: string) => sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export interface SeededChat {
  /** The target's id. */
  id: string;
  kind: 'group' | 'channel';
  /** The chat id, as the target's external id. */
  externalId: string;
  onExpiry: 'kick' | 'none';
}

/** A Telegram bot connected to the project, its token sealed with the instance's secret box. */
export async function insertTelegramBot(h: Harness, projectId: string, bot: { id: number; token: string }): Promise<void> {
  await insertIntegration(h, projectId, { platform: 'telegram', botId: String(bot.id), botTokenSealed: h.container.secretBox!.seal(bot.token) });
}

/** A Telegram chat target (a group or channel). */
export async function insertChat(h: Harness, projectId: string, chatId: number | string, o: { kind?: 'group' | 'channel'; onExpiry?: 'kick' | 'none' } = {}): Promise<SeededChat> {
  const id = randomUUID();
  const kind = o.kind ?? 'group';
  await h.database.db.execute(sql`
    INSERT INTO targets (id, project_id, name, platform, kind, external_id, on_expiry)
    VALUES (${id}, ${projectId}, ${`chat ${chatId}`}, 'telegram', ${kind}, ${String(chatId)}, ${o.onExpiry ?? null})`);
  return { id, kind, externalId: String(chatId), onExpiry: o.onExpiry ?? 'kick' };
}

/** Access rows of one chat target, as the planner writes them (pending and due unless told); the commit wakes the workers. */
export async function insertChatAccess(h: Harness, projectId: string, chat: SeededChat, rows: readonly AccessSeed[]): Promise<void> {
  await insertAccessRows(h, projectId, { ...chat, platform: 'telegram', guildId: null }, rows);
}

export interface SeededInvite {
  inviteLink: string;
  targetId: string;
  userId: string;
  chatId: string;
}

/** A link of tenure's as the connector records it (no event here: the update tests do not read it). */
export async function insertInvite(
  h: Harness,
  projectId: string,
  chat: SeededChat,
  o: { userId: string; botId: number | string; inviteLink?: string; createsJoinRequest?: boolean; expiresAt?: Date },
): Promise<SeededInvite> {
  const inviteLink = o.inviteLink ?? `https://t.me/+${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await h.database.db.execute(sql`
    INSERT INTO telegram_invites (project_id, target_id, user_id, membership_id, chat_id, bot_id, invite_link, name, creates_join_request, expires_at)
    VALUES (${projectId}, ${chat.id}, ${o.userId}, NULL, ${chat.externalId}, ${String(o.botId)}, ${inviteLink}, ${`m:${o.userId}`.slice(0, 32)},
            ${o.createsJoinRequest ?? false}, ${(o.expiresAt ?? new Date(Date.now() + 86_400_000)).toISOString()}::timestamptz)`);
  return { inviteLink, targetId: chat.id, userId: o.userId, chatId: chat.externalId };
}

/**
 * A link the bot makes on the fake Telegram for one member (single-use, or a join-request link),
 * recorded as the connector records it.
 */
export async function inviteOnTelegram(
  h: Harness,
  projectId: string,
  chat: SeededChat,
  bot: { id: number; token: string },
  userId: string,
  o: { joinRequest?: boolean } = {},
): Promise<SeededInvite> {
  const api = createTelegramApi(bot.token, h.telegram.url);
  const link = await api.createChatInviteLink(Number(chat.externalId), {
    name: `m:${userId}`.slice(0, 32),
    expire_date: Math.floor(Date.now() / 1000) + 86_400,
    ...(o.joinRequest ? { creates_join_request: true } : { member_limit: 1 }),
  });
  return insertInvite(h, projectId, chat, { userId, botId: bot.id, inviteLink: link.invite_link, createsJoinRequest: o.joinRequest });
}

export interface InviteRow {
  user_id: string;
  used_at: string | null;
  used_by: string | null;
  revoked_at: string | null;
}

export async function inviteRow(h: Harness, inviteLink: string): Promise<InviteRow | undefined> {
  return rowsOf<InviteRow>(
    await h.database.db.execute(sql`
      SELECT user_id, ${isoCol('used_at')} AS used_at, used_by, ${isoCol('revoked_at')} AS revoked_at
      FROM telegram_invites WHERE invite_link = ${inviteLink}`),
  )[0];
}

export interface StoredUpdateRow {
  bot_id: string;
  update_id: number;
  payload: Record<string, unknown>;
  handled: boolean;
}

/** The project's stored updates, by update_id. */
export async function updateRows(h: Harness, projectId: string): Promise<StoredUpdateRow[]> {
  const rows = rowsOf<Omit<StoredUpdateRow, 'update_id'> & { update_id: string | number }>(
    await h.database.db.execute(sql`
      SELECT bot_id, update_id, payload, handled_at IS NOT NULL AS handled FROM telegram_updates
      WHERE project_id = ${projectId} ORDER BY update_id`),
  );
  return rows.map((r) => ({ ...r, update_id: Number(r.update_id) }));
}

/** The integration's stored getUpdates offset. */
export async function storedOffset(h: Harness, projectId: string): Promise<number | null> {
  const value = rowsOf<{ update_offset: string | number | null }>(
    await h.database.db.execute(sql`SELECT update_offset FROM integrations WHERE project_id = ${projectId} AND platform = 'telegram'`),
  )[0]?.update_offset;
  return value === undefined || value === null ? null : Number(value);
}

/** A world on the fake Telegram: a bot that is an admin of a supergroup, and users. */
export function telegramWorld(telegram: FakeTelegram, o: { type?: 'supergroup' | 'channel' } = {}) {
  const bot = telegram.addBot();
  const chat = telegram.addChat({ type: o.type ?? 'supergroup' });
  telegram.setBot(chat.id, bot.id, 'admin');
  return { bot, chat };
}

/** A ChatMemberUpdated of `userId` from `from` → `to`, as Telegram sends it. */
export function chatMemberUpdate(
  chatId: number,
  userId: number,
  from: string,
  to: string,
  o: { inviteLink?: string; via?: number; kind?: 'chat_member' | 'my_chat_member'; rights?: { can_invite_users: boolean; can_restrict_members: boolean } } = {},
): Record<string, unknown> {
  const user = { id: userId, is_bot: o.kind === 'my_chat_member', first_name: `User ${userId}` };
  const member = (status: string) =>
    status === 'administrator'
      ? { user, status, can_be_edited: false, is_anonymous: false, can_manage_chat: true, ...(o.rights ?? { can_invite_users: true, can_restrict_members: true }) }
      : { user, status, ...(status === 'kicked' ? { until_date: 0 } : {}) };
  return {
    [o.kind ?? 'chat_member']: {
      chat: { id: chatId, type: 'supergroup', title: 'chat' },
      from: { id: o.via ?? userId, is_bot: false, first_name: 'someone' },
      date: Math.floor(Date.now() / 1000),
      old_chat_member: member(from),
      new_chat_member: member(to),
      ...(o.inviteLink ? { invite_link: { invite_link: o.inviteLink, creator: { id: 1, is_bot: true, first_name: 'bot' }, creates_join_request: false, is_primary: false, is_revoked: false } } : {}),
    },
  };
}

/** A ChatJoinRequest of `userId`, as Telegram sends it. */
export function joinRequestUpdate(chatId: number, userId: number, inviteLink?: string): Record<string, unknown> {
  return {
    chat_join_request: {
      chat: { id: chatId, type: 'supergroup', title: 'chat' },
      from: { id: userId, is_bot: false, first_name: `User ${userId}` },
      user_chat_id: userId,
      date: Math.floor(Date.now() / 1000),
      ...(inviteLink ? { invite_link: { invite_link: inviteLink, creator: { id: 1, is_bot: true, first_name: 'bot' }, creates_join_request: true, is_primary: false, is_revoked: false } } : {}),
    },
  };
}
