import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, numeric, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/** The catalogue: the plans a project sells and the targets they grant access to. */

export const plans = pgTable(
  'plans',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    price: numeric('price', { precision: 14, scale: 2 }).notNull(),
    currency: text('currency').notNull(),
    duration: text('duration').notNull(),
    priceFormatted: text('price_formatted').notNull(),
    recurring: boolean('recurring').notNull().default(false),
    oneTime: boolean('one_time').notNull().default(true),
    /** A recurring plan's free trial in days (docs/payments.md, "Trials"); null: none. */
    trialDays: integer('trial_days'),
    /** The plan's own reminder offsets (docs/lifecycle.md), stored like the setting; null: the project's. */
    reminderOffsets: jsonb('reminder_offsets'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    /** A deleted plan is hidden from the API but kept, so its members keep plan_name until they end. */
    deletedAt: tz('deleted_at'),
  },
  (t) => [index('plans_project_idx').on(t.projectId, t.createdAt)],
);

/** Where access is granted: a Discord guild or role, a Telegram group or channel. */
export const targets = pgTable(
  'targets',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** `discord` | `telegram`. */
    platform: text('platform').notNull(),
    /** `guild` | `group` | `channel` | `role`. */
    kind: text('kind').notNull(),
    /** The platform's own id of the guild, role, group or channel. */
    externalId: text('external_id').notNull(),
    isEnabled: boolean('is_enabled').notNull().default(true),
    parentTargetId: uuid('parent_target_id'),
    /**
     * What losing access does here (docs/access.md): `remove_role` | `kick` | `none`; null = the
     * kind's default (role `remove_role`, guild `none`, Telegram `kick`).
     */
    onExpiry: text('on_expiry'),
    /** `ok` | `unhealthy` (the bot cannot act here: 50013 Missing Permissions, 10011 Unknown Role…). */
    health: text('health').notNull().default('ok'),
    /** `{code, message}` of the error that made the target unhealthy; null while ok. */
    healthError: jsonb('health_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('targets_project_external_key').on(t.projectId, t.platform, t.externalId),
    index('targets_project_created_idx').on(t.projectId, t.createdAt, t.id),
  ],
);

/** Which targets a plan grants. */
export const planTargets = pgTable(
  'plan_targets',
  {
    planId: uuid('plan_id')
      .notNull()
      .references(() => plans.id, { onDelete: 'cascade' }),
    targetId: uuid('target_id')
      .notNull()
      .references(() => targets.id, { onDelete: 'cascade' }),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.planId, t.targetId] }), index('plan_targets_target_idx').on(t.targetId)],
);
