import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/** Events and webhooks: the outbox, the endpoints, and the deliveries and attempts between them. */

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
    /**
     * No foreign key (dropped in 0020): the trigger tenure_events_inserted does its check once per
     * statement, locking the project row FOR KEY SHARE as the key did, and tenure_project_cascade
     * deletes the events of a deleted project (drizzle/functions.sql).
     */
    projectId: uuid('project_id').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    emittedAt: tz('emitted_at').notNull().defaultNow(),
    /** Null: every enabled webhook of the project gets the event. Set: only that one (`webhook.test`). */
    targetWebhookId: uuid('target_webhook_id'),
    /** True for events only live updates carry (the webhook-deliveries channel): never fanned out to webhooks. */
    liveOnly: boolean('live_only').notNull().default(false),
  },
  (t) => [
    uniqueIndex('events_seq_key').on(t.seq),
    index('events_project_seq_idx').on(t.projectId, t.seq),
    index('events_emitted_idx').on(t.emittedAt),
  ],
);

/*
 * What the outbox's two in-process readers have done with each event, kept beside the event rather
 * than in it (migration 0018): marking a wide event row rewrote the whole row and every one of its
 * indexes, twice per event, which cost the database about as much as the write that made the
 * event. These narrow rows are written by the AFTER INSERT trigger on `events`
 * (drizzle/functions.sql), in the statement of the event, only for the readers its project has (a
 * live audience, a connected platform: the flags on `projects`), and deleted with it by
 * `tenure_event_cascade`. Keyed by the event's `seq`; no foreign key (the trigger writes them for
 * the events of its own statement).
 */

/**
 * The live-update broadcast (src/store/live-events.store.ts): `broadcastAt` is null until a node
 * claims the event for its one broadcast cluster-wide, then the database's clock at that claim (a
 * resumed subscription's replay reads it).
 */
export const eventBroadcasts = pgTable(
  'event_broadcasts',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    broadcastAt: tz('broadcast_at'),
  },
  (t) => [index('event_broadcasts_pending_idx').on(t.seq).where(sql`broadcast_at IS NULL`)],
);

/**
 * The events the access planner (src/store/access-plan.store.ts) has not read yet, one row each,
 * deleted as it plans them (once cluster-wide). Live-only events are never queued: they change
 * nobody's access.
 */
export const eventPlanQueue = pgTable('event_plan_queue', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
});

export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /**
     * The signing secret (64 lowercase hex), kept because every delivery is signed with it: sealed
     * with the instance's key (`v1.<key id>.…`, src/domain/webhooks/webhook-secrets.ts), or as it
     * is on PostgreSQL without TENURE_ENCRYPTION_KEY until a start with the key seals it.
     */
    secret: text('secret').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    /** After a rotation the old secret (stored as `secret` is) keeps signing, alongside the new one, until this expires. */
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
 * Webhook delivery (src/webhooks/README.md). An AFTER INSERT trigger on `events`
 * (drizzle/functions.sql) writes, in the transaction of the event itself, one `webhook_deliveries`
 * row per target webhook; after commit the writer's process wakes the workers
 * (src/database/wakeups.ts). The body a delivery sends is rendered from its event when it is claimed
 * (`tenure_webhook_body`): the event is never changed, so every attempt sends the same bytes.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    /**
     * Its event's project. No foreign key (dropped in 0016): the event's own key already holds it,
     * and deleting the project deletes the delivery through its event and its webhook; the check
     * was a query and a lock of the project row per delivery (src/webhooks/README.md).
     */
    projectId: uuid('project_id').notNull(),
    /**
     * Deleting a webhook deletes its deliveries: pending ones are cancelled with it. Done by the
     * trigger `tenure_webhook_cascade`, not a foreign key (dropped in 0017): every writer holds the
     * webhook (the fan-out FOR KEY SHARE, replays FOR NO KEY UPDATE) while it writes.
     */
    webhookId: uuid('webhook_id').notNull(),
    /** Its event; deleting the event deletes it (the trigger `tenure_event_cascade`, as for the payload). */
    eventId: uuid('event_id').notNull(),
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
    // Each endpoint's pending deliveries in due order: the claim walks the endpoints through it
    // (one step per endpoint, however long its queue) and reads each one's due deliveries from
    // it, so one endpoint's backlog never hides another's (src/store/delivery-claim.ts).
    index('webhook_deliveries_endpoint_due_idx').on(t.webhookId, t.nextAttemptAt).where(sql`status = 'pending'`),
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
