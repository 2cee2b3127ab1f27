import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  jsonb,
  numeric,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * The tables. drizzle-kit generates the SQL migrations in `drizzle/` from this file
 * (`npm run db:generate`); migrations are forward-only.
 */

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const projects = pgTable('projects', {
  id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
  name: text('name').notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    label: text('label'),
    /** Hex SHA-256 of the secret; the secret itself is never stored. */
    keyHash: text('key_hash').notNull(),
    lastFour: text('last_four').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    createdBy: text('created_by'),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    updatedBy: text('updated_by'),
    revokedAt: tz('revoked_at'),
    revokedBy: text('revoked_by'),
  },
  (t) => [uniqueIndex('api_keys_key_hash_key').on(t.keyHash), index('api_keys_project_idx').on(t.projectId)],
);

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
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [index('plans_project_idx').on(t.projectId, t.createdAt)],
);

export const memberships = pgTable(
  'memberships',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    planId: uuid('plan_id').references(() => plans.id, { onDelete: 'set null' }),
    startDate: tz('start_date').notNull().defaultNow(),
    endDate: tz('end_date').notNull(),
    /** `active` | `expired`; the expiry sweeper moves active rows past their end date to expired. */
    status: text('status').notNull().default('active'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('memberships_project_user_key').on(t.projectId, t.userId),
    index('memberships_project_created_idx').on(t.projectId, t.createdAt, t.id),
  ],
);

export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** 64 lowercase hex characters; kept because every delivery is signed with it. */
    secret: text('secret').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhooks_project_idx').on(t.projectId)],
);

/**
 * The outbox: every state change writes its event here in the same transaction.
 * Webhook deliveries and live updates are fed from these rows; `seq` orders them.
 */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    emittedAt: tz('emitted_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('events_seq_key').on(t.seq), index('events_project_seq_idx').on(t.projectId, t.seq)],
);
