import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
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
    /** A deleted plan is hidden from the API but kept, so its members keep plan_name until they end. */
    deletedAt: tz('deleted_at'),
  },
  (t) => [index('plans_project_idx').on(t.projectId, t.createdAt)],
);

/**
 * Installation-wide secrets every node must share, created once by whichever node starts first
 * (INSERT … ON CONFLICT DO NOTHING), e.g. the key that signs live-update tokens.
 */
export const instanceSecrets = pgTable('instance_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
});

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

/** The members a project has seen, recorded when a membership names them. */
export const users = pgTable(
  'users',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    firstName: text('first_name'),
    username: text('username'),
    isAdmin: boolean('is_admin').notNull().default(false),
    balance: numeric('balance', { precision: 14, scale: 2 }).notNull().default('0'),
    currency: text('currency').notNull().default('USD'),
    firstSeen: tz('first_seen').notNull().defaultNow(),
    lastSeen: tz('last_seen').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.userId] }),
    index('users_project_first_seen_idx').on(t.projectId, t.firstSeen, t.userId),
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

/** Project preferences; a key without a row has its documented default. */
export const settings = pgTable(
  'settings',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    value: jsonb('value').notNull(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key] })],
);

/**
 * Idempotency-Key records: the first response of a POST, replayed byte for byte to repeats with the
 * same body for 24 hours. `state` is `running` until the first request finishes.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    /** SHA-256 of method, path and body: the same key with another request is refused. */
    requestHash: text('request_hash').notNull(),
    /** `running` | `done`. */
    state: text('state').notNull().default('running'),
    responseStatus: integer('response_status'),
    responseHeaders: jsonb('response_headers'),
    responseBody: text('response_body'),
    createdAt: tz('created_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
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
    // The expiry sweeper's scan: only active rows, by end date.
    index('memberships_active_end_idx').on(t.endDate).where(sql`status = 'active'`),
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
    /** After a rotation the old secret keeps signing, alongside the new one, until this expires. */
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: tz('previous_secret_expires_at'),
    /** The first failed attempt since the last success; 5 days of only failures disable the endpoint. */
    failingSince: tz('failing_since'),
    disabledAt: tz('disabled_at'),
    /** `manual` (the API) | `failing` (5 days of failures); null while enabled. */
    disabledReason: text('disabled_reason'),
  },
  (t) => [index('webhooks_project_idx').on(t.projectId)],
);

/**
 * The outbox: every state change writes its event here in the same statement, always through
 * src/store/outbox.ts (typed on the event catalogue). Webhook deliveries and live updates are fed
 * from these rows; `seq` orders them.
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
    /** Null: every enabled webhook of the project gets the event. Set: only that one (`webhook.test`). */
    targetWebhookId: uuid('target_webhook_id'),
    /** True for events only live updates carry (the webhook-deliveries channel): never fanned out to webhooks. */
    liveOnly: boolean('live_only').notNull().default(false),
    /** When a node claimed the event for its live-update broadcast; null until then (broadcast once cluster-wide). */
    broadcastAt: tz('broadcast_at'),
  },
  (t) => [
    uniqueIndex('events_seq_key').on(t.seq),
    index('events_project_seq_idx').on(t.projectId, t.seq),
    index('events_unbroadcast_idx').on(t.seq).where(sql`broadcast_at IS NULL`),
    index('events_emitted_idx').on(t.emittedAt),
  ],
);

/**
 * Webhook delivery (src/webhooks/README.md). An AFTER INSERT trigger on `events`
 * (drizzle/functions.sql) writes, in the transaction of the event itself, the body once into
 * `webhook_payloads` and one `webhook_deliveries` row per target webhook, then `pg_notify`s the
 * workers.
 */
export const webhookPayloads = pgTable('webhook_payloads', {
  eventId: uuid('event_id')
    .primaryKey()
    .references(() => events.id, { onDelete: 'cascade' }),
  /** The exact bytes every attempt of every delivery of this event sends and signs. */
  body: text('body').notNull(),
});

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Deleting a webhook deletes its deliveries: pending ones are cancelled with it. */
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    /** `pending` | `delivered` | `failed` (dropped or retries exhausted) | `cancelled`. */
    status: text('status').notNull().default('pending'),
    /** Attempts started; a claim counts one, so it is also the fencing token of the lease. */
    attempts: integer('attempts').notNull().default(0),
    /** When a pending delivery may be claimed; while claimed, when its lease runs out. */
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    /** The worker holding the lease; null when nobody does. */
    leasedBy: text('leased_by'),
    /** The delivery this one replays (a replay is a new delivery of the same event). */
    replayOf: uuid('replay_of'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    completedAt: tz('completed_at'),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt, t.id),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);

export const webhookDeliveryAttempts = pgTable(
  'webhook_delivery_attempts',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    attemptedAt: tz('attempted_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** The receiver's HTTP status; null when no response came (timeout, network, refused address). */
    statusCode: integer('status_code'),
    /** Null on success; else `http_status` | `redirect` | `timeout` | `connection` | `tls` | `dns` | `blocked_address`. */
    errorClass: text('error_class'),
    errorMessage: text('error_message'),
    /** The start of the response body, capped (src/webhooks/http-sender.ts); never the whole body. */
    responseExcerpt: text('response_excerpt'),
    /** `delivered` | `retry` | `dropped` | `exhausted`. */
    outcome: text('outcome').notNull(),
    /** When the next attempt is due after this one; null when this attempt ended the delivery. */
    nextAttemptAt: tz('next_attempt_at'),
  },
  (t) => [index('webhook_delivery_attempts_delivery_idx').on(t.deliveryId, t.attempt)],
);
