import { sql } from 'drizzle-orm';
import { bigint, boolean, index, numeric, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { plans } from './catalogue.js';
import { tz } from './columns.js';
import { projects } from './projects.js';

/** Members: the users a project has seen, the ones it banned, and their memberships. */

/** The members a project has seen, recorded when a membership names them. */
export const users = pgTable(
  'users',
  {
    /** No foreign key (dropped in 0020): checked once per statement, as memberships' project is (below). */
    projectId: uuid('project_id').notNull(),
    userId: text('user_id').notNull(),
    firstName: text('first_name'),
    username: text('username'),
    isAdmin: boolean('is_admin').notNull().default(false),
    balance: numeric('balance', { precision: 14, scale: 2 }).notNull().default('0'),
    currency: text('currency').notNull().default('USD'),
    /** The e-mail address Stripe Checkout collected (setting collect_email_on_subscribe), the latest one; null: none. */
    email: text('email'),
    firstSeen: tz('first_seen').notNull().defaultNow(),
    lastSeen: tz('last_seen').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.userId] }),
    index('users_project_first_seen_idx').on(t.projectId, t.firstSeen, t.userId),
    // The dashboard's members table (docs/dashboard-members.md): its name order and a prefix search
    // of the name, the username and the id, compared byte by byte (COLLATE "C") so that one index
    // serves both an order and LIKE 'prefix%' whatever the database's collation.
    index('users_project_name_idx').on(t.projectId, sql`(lower(coalesce(${t.firstName}, ${t.username}, '')) COLLATE "C")`, t.userId),
    index('users_project_username_prefix_idx').on(t.projectId, sql`(lower(${t.username}) COLLATE "C")`),
    index('users_project_user_prefix_idx').on(t.projectId, sql`(${t.userId} COLLATE "C")`),
  ],
);

/** Banned users: a banned user gets no new membership in the project. */
export const bans = pgTable(
  'bans',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    bannedAt: tz('banned_at').notNull().defaultNow(),
    /** The API key id that banned the user. */
    bannedBy: text('banned_by'),
    reason: text('reason'),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] })],
);

export const memberships = pgTable(
  'memberships',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    /**
     * No foreign key (dropped in 0020): it checked and locked the project row once per inserted
     * row. The trigger tenure_memberships_held does that once per statement (tenure_hold_projects)
     * and tenure_project_cascade deletes the rows of a deleted project (drizzle/functions.sql).
     */
    projectId: uuid('project_id').notNull(),
    userId: text('user_id').notNull(),
    planId: uuid('plan_id').references(() => plans.id, { onDelete: 'set null' }),
    startDate: tz('start_date').notNull().defaultNow(),
    endDate: tz('end_date').notNull(),
    /** `active` | `expired`; the expiry sweeper moves active rows past their end date to expired. */
    status: text('status').notNull().default('active'),
    /** The provider's subscription behind the membership (Stripe `sub_…`), null unless a recurring payment backs it. */
    subscriptionId: text('subscription_id'),
    /** The subscription's status as the provider last reported it (`active`, `past_due`, `canceled`…). */
    subscriptionStatus: text('subscription_status'),
    /** When the provider created the event that set `subscription_status`: an older event never overwrites a newer one. */
    subscriptionStatusAt: tz('subscription_status_at'),
    /**
     * Whether the subscription ends when its paid period does (its renewal cancelled, in the portal
     * or on Stripe: docs/portal.md), as the event that set `subscription_status` last said.
     */
    subscriptionCancelAtPeriodEnd: boolean('subscription_cancel_at_period_end').notNull().default(false),
    /** When the Stripe trial the membership began with ends (docs/payments.md, "Trials"); null: it had none. */
    trialEndsAt: tz('trial_ends_at'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('memberships_project_user_key').on(t.projectId, t.userId),
    index('memberships_project_created_idx').on(t.projectId, t.createdAt, t.id),
    // The list's end-date filters, statuses and sorts (docs/memberships.md, "Listing and filtering"),
    // and the same with a plan: each a range of one index, read in its order.
    index('memberships_project_end_idx').on(t.projectId, t.endDate, t.id),
    index('memberships_project_plan_end_idx').on(t.projectId, t.planId, t.endDate, t.id),
    // The sub-states of active a list may filter by, each its own (small) range by end date, so a
    // page of them reads its rows only instead of every active membership (bench/queries.ts). Their
    // predicates are the list's WHERE (src/store/membership-queries.ts) word for word, which is
    // what lets PostgreSQL use them: cancelling (within subscribed) here; in_grace and in_trial
    // read memberships_project_failing_idx and memberships_project_trial_idx below.
    index('memberships_subscribed_end_idx').on(t.projectId, t.endDate, t.id).where(sql`subscription_id IS NOT NULL`),
    // The expiry sweeper's scan: only active rows, by end date; the id orders the reminders' scan
    // through memberships sharing one end date (src/store/reminders.store.ts).
    index('memberships_active_end_idx').on(t.endDate, t.id).where(sql`status = 'active'`),
    // The reminders' scan of one lane (src/store/reminders.store.ts): the lane (the id's last byte
    // modulo REMINDER_LANES, 4), then the same order, so a lane reads its own rows only instead of
    // every lane's and dropping three in four.
    index('memberships_active_lane_end_idx').on(sql`(get_byte(uuid_send(id), 15) % 4)`, t.endDate, t.id).where(sql`status = 'active'`),
    index('memberships_subscription_idx').on(t.projectId, t.subscriptionId).where(sql`subscription_id IS NOT NULL`),
    // The kinds of active (in grace, cancelling, in trial) and the dashboard's "payment failed":
    // each the few memberships it can match, by end date, so a filter reads those instead of
    // testing every active membership (docs/dashboard-members.md, "Indexes").
    index('memberships_project_failing_idx').on(t.projectId, t.endDate, t.id).where(sql`subscription_status IN ('past_due', 'unpaid')`),
    index('memberships_project_trial_idx').on(t.projectId, t.endDate, t.id).where(sql`trial_ends_at IS NOT NULL`),
    index('memberships_project_not_renewing_idx')
      .on(t.projectId, t.endDate, t.id)
      .where(sql`subscription_id IS NOT NULL AND (subscription_status IS NULL OR subscription_status NOT IN ('active', 'trialing') OR subscription_cancel_at_period_end)`),
  ],
);

/**
 * How many memberships each project holds (docs/memberships.md, "Listing and filtering"): the
 * `total` of an unfiltered list page, read without counting every membership. The triggers of
 * drizzle/functions.sql append each inserting or deleting statement's change (`folded` false: no
 * writer updates a row here, so writers never wait for each other); the list's count folds what
 * was appended into the project's one folded row and sums, in one statement.
 */
export const membershipCounts = pgTable(
  'membership_counts',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    folded: boolean('folded').notNull().default(false),
    /** Memberships added (or, negative, removed) by one statement; the project's total once folded. */
    memberships: bigint('memberships', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('membership_counts_folded_key').on(t.projectId).where(sql`folded`),
    index('membership_counts_appended_idx').on(t.projectId).where(sql`NOT folded`),
  ],
);
