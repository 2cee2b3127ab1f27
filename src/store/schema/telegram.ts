import { sql } from 'drizzle-orm';
import { bigint, boolean, index, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * Telegram's side of access (docs/access-telegram.md): the invite links tenure made for one
 * member each, and the bot's updates as received, so each is handled at least once and only once.
 */

/**
 * An invite link made for one member of one chat target: single-use (`member_limit` 1) and
 * expiring, or a join-request link whose requests are approved only for members with access.
 * Current while not revoked, not used and not expired; `GET …/memberships/{id}/invites` lists those.
 */
export const telegramInvites = pgTable(
  'telegram_invites',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** No foreign key: a deleted target's links are still revoked (access rows keep its ids too). */
    targetId: uuid('target_id').notNull(),
    userId: text('user_id').notNull(),
    /** The membership the link was made for (its name on Telegram); null if it was deleted since. */
    membershipId: uuid('membership_id'),
    chatId: text('chat_id').notNull(),
    /** The bot that made it (only its creator can revoke it). */
    botId: text('bot_id').notNull(),
    inviteLink: text('invite_link').notNull(),
    name: text('name').notNull(),
    createsJoinRequest: boolean('creates_join_request').notNull().default(false),
    expiresAt: tz('expires_at').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    /** When the member (or someone else: `used_by`) joined through it. */
    usedAt: tz('used_at'),
    usedBy: text('used_by'),
    /** When tenure revoked it on Telegram (access ended, misuse, replaced). */
    revokedAt: tz('revoked_at'),
  },
  (t) => [
    uniqueIndex('telegram_invites_link_key').on(t.inviteLink),
    index('telegram_invites_member_idx').on(t.projectId, t.userId, t.targetId, t.createdAt),
  ],
);

/**
 * The bot's updates (`chat_member`, `chat_join_request`) as received by long polling or by the
 * webhook route, keyed by the bot's `update_id`: a repeated delivery is a no-op, and the worker
 * holding the bot's lease handles them in order, marking each `handled_at`.
 */
export const telegramUpdates = pgTable(
  'telegram_updates',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    botId: text('bot_id').notNull(),
    updateId: bigint('update_id', { mode: 'number' }).notNull(),
    payload: jsonb('payload').notNull(),
    receivedAt: tz('received_at').notNull().defaultNow(),
    handledAt: tz('handled_at'),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.botId, t.updateId] }),
    index('telegram_updates_unhandled_idx').on(t.projectId, t.updateId).where(sql`handled_at IS NULL`),
  ],
);
