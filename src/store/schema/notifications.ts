import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, smallint, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * Messages the project's bot sends a member on its own (docs/front-desk.md, "Confirmations"): one
 * row per message to send, written in the transaction of the change it reports, and the members
 * the bot could not reach.
 */

/**
 * A confirmation to send: one per (project, `dedupe_key`), the payment's key, so a payment
 * applied twice (a redelivered Stripe event, the done page and the webhook) queues one message.
 * The sender claims due rows with `FOR UPDATE SKIP LOCKED`, pushing `next_attempt_at` past its
 * lease, so one message is never sent by two processes at once.
 */
export const notifications = pgTable(
  'notifications',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    /** The membership it confirms (no foreign key: the row outlives a deleted membership and is then dropped). */
    membershipId: uuid('membership_id').notNull(),
    /**
     * `confirmation`, or `invite`: a Telegram invite link made for a paid member, sent unless a
     * confirmation carried it, or `reminder`: the membership ends soon (docs/lifecycle.md).
     */
    kind: text('kind').notNull(),
    /** What makes it one message: `payment:<payment key>`, `invite:<telegram_invites.id>`, `reminder:<membership>:<end date ms>:<offset>`. */
    dedupeKey: text('dedupe_key').notNull(),
    /** `discord` | `telegram`: the platform of the plan's targets, else the project's one bot. */
    platform: text('platform').notNull(),
    /** `pending` | `sent` | `unreachable` | `failed` | `dropped`. */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    /** What the platform answered last (`code: message`), null once sent. */
    lastError: text('last_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
    sentAt: tz('sent_at'),
    /** A reminder's end date: dropped unsent once the membership ends at another date. */
    endDate: tz('end_date'),
    /** A reminder's offset before the end (`3d`). */
    reminderOffset: text('reminder_offset'),
  },
  (t) => [
    uniqueIndex('notifications_dedupe_key').on(t.projectId, t.dedupeKey),
    index('notifications_due_idx').on(t.nextAttemptAt).where(sql`state = 'pending'`),
    // A member's messages, newest first (GET …/users/{user_id}/notifications).
    index('notifications_user_idx').on(t.projectId, t.userId, t.createdAt),
  ],
);

/**
 * A member the project's bot cannot write to on a platform (Discord 50007, Telegram "bot was
 * blocked by the user"): recorded once, with its `notification.failed` event, and deleted when the
 * member talks to the bot again.
 */
export const unreachableMembers = pgTable(
  'unreachable_members',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    platform: text('platform').notNull(),
    reason: text('reason').notNull(),
    since: tz('since').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId, t.platform] })],
);

/**
 * Reminders before a membership ends (docs/lifecycle.md): one row per (membership, end date,
 * offset) ever due, `sent` (its event written and its message queued) or `skipped` (a nearer
 * offset was due at the same pass), so none is written twice, whatever the restarts or workers.
 */
export const reminders = pgTable(
  'reminders',
  {
    membershipId: uuid('membership_id').notNull(),
    endDate: tz('end_date').notNull(),
    offset: text('reminder_offset').notNull(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    state: text('state').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.membershipId, t.endDate, t.offset] }), index('reminders_project_idx').on(t.projectId)],
);

/**
 * How far the reminders' scan has come for one offset and one lane (a fixed share of the
 * memberships, by id): the last membership (end date, id) of that lane whose reminder instant
 * (end − offset) it has passed. Locked by the pass that advances it; the lanes of an offset advance
 * side by side.
 */
export const reminderCursors = pgTable(
  'reminder_cursors',
  {
    offset: text('reminder_offset').notNull(),
    lane: smallint('lane').notNull().default(0),
    endDate: tz('end_date').notNull(),
    membershipId: uuid('membership_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.offset, t.lane] })],
);
