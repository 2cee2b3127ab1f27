import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, integer, numeric, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './projects.js';

/**
 * Money and growth (docs/analytics.md): a project's facts per UTC day, kept exact by the triggers
 * of drizzle/functions.sql in the transaction of every payment and membership change. Each change
 * appends its own rows (`folded` false: no row is ever updated by a writer, so writers never wait
 * for each other here); a read folds what was appended into one row per key (`folded` true). A
 * figure is the sum of both kinds, so it is the same before and after a fold.
 */
export const analyticsDays = pgTable(
  'analytics_days',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The UTC day the facts happened (or, for a scheduled end, will happen) on. */
    day: date('day', { mode: 'string' }).notNull(),
    /** The plan, or the zero uuid for none (a unique key needs a value). */
    planKey: uuid('plan_key').notNull(),
    /** The payment's currency; '' for the membership counts. */
    currency: text('currency').notNull(),
    folded: boolean('folded').notNull().default(false),
    /** Memberships starting on the day (new members) and ending on it (churned, or scheduled to). */
    membersStarted: integer('members_started').notNull().default(0),
    membersEnded: integer('members_ended').notNull().default(0),
    /** Payments that succeeded on the day and their amount (smallest unit). */
    grossCount: integer('gross_count').notNull().default(0),
    grossMinor: bigint('gross_minor', { mode: 'number' }).notNull().default(0),
    refundedCount: integer('refunded_count').notNull().default(0),
    refundedMinor: bigint('refunded_minor', { mode: 'number' }).notNull().default(0),
    disputedCount: integer('disputed_count').notNull().default(0),
    disputedMinor: bigint('disputed_minor', { mode: 'number' }).notNull().default(0),
    /** Payments first recorded failed on the day. */
    failedCount: integer('failed_count').notNull().default(0),
    /** The change of MRR on the day, smallest unit per month, exact (numeric). */
    mrrMinor: numeric('mrr_minor').notNull().default('0'),
  },
  (t) => [
    uniqueIndex('analytics_days_folded_key').on(t.projectId, t.day, t.planKey, t.currency).where(sql`folded`),
    index('analytics_days_appended_idx').on(t.projectId, t.day).where(sql`NOT folded`),
  ],
);
