import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { plans } from './catalogue.js';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * Members on the web (docs/web.md): Login with Discord from the public plan page, the member's
 * Discord token kept for joining them to the guild once they paid, and those joins.
 */

/**
 * One login under way: made when the buyer (or a member signing in to the portal) presses Login with Discord, deleted when Discord sends
 * them back (single use) or when it expires. Keyed by the SHA-256 digest of its `state`, so a
 * leaked table names no state; the PKCE verifier is sealed with the instance key.
 */
export const webLogins = pgTable(
  'web_logins',
  {
    stateHash: text('state_hash').primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The plan being bought; null for a sign-in to the portal (docs/portal.md). */
    planId: uuid('plan_id').references(() => plans.id, { onDelete: 'cascade' }),
    /**
     * Set when the login was begun from a member's portal to rejoin a Discord server (docs/portal.md,
     * "Rejoining the Discord server"): the member, whose own Discord account must come back, and the
     * guild to add them to. Null for the plan page's logins.
     */
    userId: text('user_id'),
    guildId: text('guild_id'),
    codeVerifierSealed: text('code_verifier_sealed').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
  },
  (t) => [index('web_logins_expires_idx').on(t.expiresAt)],
);

/**
 * A member's Discord OAuth2 token (scope `identify guilds.join`), sealed: what lets the bot add
 * them to a guild (Add Guild Member takes the member's own access token). One per project and member,
 * replaced by their next login.
 */
export const discordMemberTokens = pgTable(
  'discord_member_tokens',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    accessTokenSealed: text('access_token_sealed').notNull(),
    refreshTokenSealed: text('refresh_token_sealed'),
    expiresAt: tz('expires_at').notNull(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] })],
);

/**
 * A guild join to make after a payment: queued in the payment's transaction for a member who
 * logged in with Discord (one per payment key), claimed with `FOR UPDATE SKIP LOCKED` by the guild
 * join job, which adds the member to the guilds of the plan's Discord targets. A member not in a
 * server of theirs queues one from the portal too (a rejoin, for that one guild).
 */
export const guildJoins = pgTable(
  'guild_joins',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    /** The plan paid for; null for a rejoin from the portal, which names its guild instead. */
    planId: uuid('plan_id'),
    /** A rejoin from the portal (docs/portal.md): the one guild to add the member to; null: the plan's guilds. */
    guildId: text('guild_id'),
    /** `payment:<payment key>`: a payment applied twice queues one join; `rejoin:<login state digest>`: one per login. */
    dedupeKey: text('dedupe_key').notNull(),
    /** `pending` | `joined` | `failed`. */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    /** What Discord answered last (`code: message`). */
    lastError: text('last_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
    doneAt: tz('done_at'),
  },
  (t) => [
    uniqueIndex('guild_joins_dedupe_key').on(t.projectId, t.dedupeKey),
    index('guild_joins_due_idx').on(t.nextAttemptAt).where(sql`state = 'pending'`),
    // The done page reads a member's latest join.
    index('guild_joins_member_idx').on(t.projectId, t.userId),
    // Whether a plan can be bought reads its latest finished join (src/domain/web/plan-readiness.ts).
    index('guild_joins_plan_done_idx').on(t.planId, t.doneAt).where(sql`state <> 'pending'`),
  ],
);

/**
 * Telegram Login Widget answers already used (docs/web.md, "Signing in with Telegram"): Telegram
 * signs no nonce, so a signed answer opened twice is told apart by its hash (kept as its SHA-256
 * digest). A row is needed only while the answer's `auth_date` is recent enough to be accepted;
 * expired rows are swept as new ones are recorded.
 */
export const telegramLogins = pgTable(
  'telegram_logins',
  {
    hashDigest: text('hash_digest').primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    usedAt: tz('used_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
  },
  (t) => [index('telegram_logins_expires_idx').on(t.expiresAt)],
);
