import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { ApiKeyScope } from '../../domain/projects/api-key-scope.js';
import { tz } from './columns.js';

/** Projects and what belongs to a project as a whole: its API keys, settings and idempotency records. */

export const projects = pgTable('projects', {
  id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
  name: text('name').notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
  /**
   * What an event of the project must be marked for, read by tenure_events_inserted
   * (drizzle/functions.sql) in the statement that locks this row FOR KEY SHARE: no other table is
   * probed on the API's most frequent write (migration 0022). `liveUntil`: someone may be listening
   * live until then (src/live/audiences.ts; null: nobody yet). `hasIntegrations` and `hasWebhooks`:
   * the project has had a platform connected, a webhook; set by triggers on integrations and
   * webhooks in the statement that inserts one, never cleared (a stale true costs one probe).
   */
  liveUntil: tz('live_until'),
  hasIntegrations: boolean('has_integrations').notNull().default(false),
  hasWebhooks: boolean('has_webhooks').notNull().default(false),
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
    /** `full` | `read` (src/domain/projects/api-key-scope.ts); keys made before scopes are full. */
    scope: text('scope').$type<ApiKeyScope>().notNull().default('full'),
    createdAt: tz('created_at').notNull().defaultNow(),
    createdBy: text('created_by'),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    updatedBy: text('updated_by'),
    revokedAt: tz('revoked_at'),
    revokedBy: text('revoked_by'),
  },
  (t) => [uniqueIndex('api_keys_key_hash_key').on(t.keyHash), index('api_keys_project_idx').on(t.projectId)],
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

/**
 * Installation-wide secrets every node must share, created once by whichever node starts first
 * (INSERT … ON CONFLICT DO NOTHING), e.g. the key that signs live-update tokens.
 */
export const instanceSecrets = pgTable('instance_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
});
