import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * The owner's dashboard (docs/dashboard.md): admins' sessions, the one-time sign-in links that start
 * them, the Discord sign-ins under way, and the audit log of what admins did. Secrets (a session's
 * cookie value, a link's token, a login's state) are kept only as their SHA-256 digests.
 */

/** A signed-in admin's session: `user_id` null is the project's owner (a link made without `--user`). */
export const dashboardSessions = pgTable(
  'dashboard_sessions',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    userId: text('user_id'),
    /** `link` | `discord` | `telegram`. */
    method: text('method').notNull(),
    userAgent: text('user_agent'),
    createdAt: tz('created_at').notNull().defaultNow(),
    lastSeenAt: tz('last_seen_at').notNull().defaultNow(),
    /** 12 hours after the last use, never past 7 days after `created_at`. */
    expiresAt: tz('expires_at').notNull(),
    revokedAt: tz('revoked_at'),
  },
  (t) => [
    uniqueIndex('dashboard_sessions_token_idx').on(t.tokenHash),
    index('dashboard_sessions_project_idx').on(t.projectId, t.createdAt),
  ],
);

/** A one-time sign-in link (`npx tenure admin link`): 15 minutes, spent once. */
export const dashboardLinks = pgTable(
  'dashboard_links',
  {
    tokenHash: text('token_hash').primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id'),
    createdAt: tz('created_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
    usedAt: tz('used_at'),
  },
  (t) => [index('dashboard_links_expires_idx').on(t.expiresAt)],
);

/** A Discord sign-in to the dashboard under way: single-use state, PKCE verifier sealed. */
export const dashboardLogins = pgTable(
  'dashboard_logins',
  {
    stateHash: text('state_hash').primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    codeVerifierSealed: text('code_verifier_sealed').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
  },
  (t) => [index('dashboard_logins_expires_idx').on(t.expiresAt)],
);

/** What an admin did: one row per action that changed something, read newest first. */
export const dashboardAudit = pgTable(
  'dashboard_audit',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The admin; null: the owner. */
    actorUserId: text('actor_user_id'),
    sessionId: uuid('session_id'),
    action: text('action').notNull(),
    subject: text('subject'),
    details: jsonb('details').notNull().default(sql`'{}'::jsonb`),
    at: tz('at').notNull().defaultNow(),
  },
  (t) => [index('dashboard_audit_project_idx').on(t.projectId, t.id)],
);
