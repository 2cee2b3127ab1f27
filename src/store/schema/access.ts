import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * Access on Discord and Telegram (docs/access.md): the project's bot connections, and one row per
 * (member, target) saying what the member should hold there and whether the platform agrees.
 */

/** A project's bot on one platform (`PUT /integrations/discord`, `…/telegram`). */
export const integrations = pgTable(
  'integrations',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** `discord` | `telegram`. */
    platform: text('platform').notNull(),
    /** The bot token, sealed with the instance's encryption key (src/domain/integrations/secret-box.ts); never returned. */
    botTokenSealed: text('bot_token_sealed').notNull(),
    /** The bot's own user id and name on the platform, as the token check returned them. */
    botId: text('bot_id').notNull(),
    botName: text('bot_name').notNull(),
    connectedAt: tz('connected_at').notNull().defaultNow(),
    /** `ok` | `unhealthy` (the token stopped working: 401); the targets carry their own health. */
    health: text('health').notNull().default('ok'),
    /** `{code, message}` of what made it unhealthy; null while ok. */
    lastError: jsonb('last_error'),
    /**
     * Bumped by every (re)connection: access rows that failed under an older generation are
     * retried, since the bot (and its permissions) may have changed.
     */
    generation: integer('generation').notNull().default(1),
    /** The worker process that owns this bot's calls (one at a time, so one budget), until `lease_expires_at`. */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: tz('lease_expires_at'),
    /** The last periodic comparison with the platform (drift repair); null before the first. */
    reconciledAt: tz('reconciled_at'),
    /** Telegram long polling: the next `update_id` to ask `getUpdates` for (its `offset`); null before the first. */
    updateOffset: bigint('update_offset', { mode: 'number' }),
    /** Discord: the bot's application id and its public `verify_key` (hex), read when the bot is connected; null elsewhere. */
    applicationId: text('application_id'),
    verifyKey: text('verify_key'),
    /**
     * Discord: `{code, message}` of the last failed registration of the commands in the project's
     * guilds, null once they registered. The bot's health stays as it is: access calls go on.
     */
    commandsError: jsonb('commands_error'),
    /** Discord: the application's OAuth2 client secret (Login with Discord, docs/web.md), sealed like the token; null when not given. */
    clientSecretSealed: text('client_secret_sealed'),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.platform] }),
    // One bot, one project: a bot's rate-limit budget is owned by one lease.
    uniqueIndex('integrations_bot_key').on(t.platform, t.botId),
  ],
);

/**
 * One (member, target): what the member should hold (`desired`), what tenure last saw true on the
 * platform (`applied`), and where the sync stands. The planner (src/store/access-plan.store.ts)
 * sets `desired` from the memberships, set-based, after each change it reads from the outbox; the
 * worker calls the platform for `pending` rows only. The target's platform ids and `on_expiry`
 * are copied here, so a deleted target's members can still be revoked.
 */
export const access = pgTable(
  'access',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The target (no foreign key: the row outlives a deleted target until its revoke is applied). */
    targetId: uuid('target_id').notNull(),
    /** The member's id on the target's platform (docs/access.md, "Whose id is it"). */
    userId: text('user_id').notNull(),
    /** `discord` | `telegram`. */
    platform: text('platform').notNull(),
    /** The target's kind: `guild` | `role` | `group` | `channel`. */
    kind: text('kind').notNull(),
    /** The target's platform id (the role, the guild, the chat). */
    externalId: text('external_id').notNull(),
    /** A role's guild id; null for guilds and chats. */
    guildId: text('guild_id'),
    /** What a revoke does here: `remove_role` | `kick` | `none`, the target's at the last plan. */
    onExpiry: text('on_expiry').notNull(),
    /** `granted` | `revoked`. */
    desired: text('desired').notNull(),
    /** `granted` | `revoked` as last applied or observed on the platform; null when never known. */
    applied: text('applied'),
    /** `synced` | `pending` | `waiting_for_member` | `failed`. */
    state: text('state').notNull(),
    /** `{code, message}` of the last failed call; null once synced. */
    lastError: jsonb('last_error'),
    /** Calls made for the current `desired` (reset when it changes). */
    attempts: integer('attempts').notNull().default(0),
    /** When a pending row may be tried (again). */
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    /** The integration generation a `failed` row failed under (a reconnection retries it). */
    failedGeneration: integer('failed_generation'),
    syncedAt: tz('synced_at'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.targetId, t.userId] }),
    index('access_project_user_idx').on(t.projectId, t.userId, t.targetId),
    // GET /access pages newest first.
    index('access_project_created_idx').on(t.projectId, t.createdAt, t.targetId, t.userId),
    // The worker's claim: a project's due pending rows.
    index('access_pending_idx').on(t.projectId, t.nextAttemptAt).where(sql`state = 'pending'`),
    // The dashboard's "access failed" and "not linked" views: the few rows needing attention, read
    // as a range when they are few, or probed per member (project, state, user) by a page that walks
    // the table's order when they are many; desired last, so both reads are index-only.
    index('access_attention_idx').on(t.projectId, t.state, t.userId, t.desired).where(sql`state IN ('failed', 'waiting_for_member')`),
  ],
);

/**
 * A whole-project re-plan larger than one range (a bulk extend of a big project) commits range by
 * range; this row records how far it got, in the transaction of each range, so a re-plan a crash
 * interrupted is finished by the next planner to look (AccessPlanStore.resume), not left to the
 * periodic reconciliation. Deleted with the last range.
 */
export const accessPlanJobs = pgTable('access_plan_jobs', {
  projectId: uuid('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  /** Every member up to this user_id has been re-planned by the pass this row follows. */
  afterUserId: text('after_user_id').notNull(),
  /** Bumped by every range: a row that stays old has lost its planner. */
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

/**
 * Discord interaction ids taken by `/interactions/discord/{project_id}`: a replayed interaction is
 * refused. Kept a few minutes only (a signed timestamp older than that is refused anyway).
 */
export const discordInteractions = pgTable(
  'discord_interactions',
  {
    id: text('id').primaryKey(),
    seenAt: tz('seen_at').notNull(),
  },
  (t) => [index('discord_interactions_seen_idx').on(t.seenAt)],
);
