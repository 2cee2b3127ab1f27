import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { plans } from './catalogue.js';
import { tz } from './columns.js';
import { merchantAccounts } from './payments.js';
import { projects } from './projects.js';

/**
 * The front desk (docs/front-desk.md): links a member opens in a browser. Each link's secret is
 * kept only as its SHA-256 digest (hex), as API keys are: a leaked table opens no page.
 */

/**
 * A pay link: one plan for one member, bound before money moves. It holds the Checkout Session it
 * made while that session is open, so opening the link again reuses it; `completed_at` is set
 * once the session's payment was applied, after which the link is used.
 */
export const payLinks = pgTable(
  'pay_links',
  {
    idHash: text('id_hash').primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    planId: uuid('plan_id')
      .notNull()
      .references(() => plans.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    /** The coupon code the member asked for, checked again when the session is made. */
    coupon: text('coupon'),
    createdAt: tz('created_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
    merchantAccountId: uuid('merchant_account_id').references(() => merchantAccounts.id, { onDelete: 'set null' }),
    /** The Checkout Session the link made last (Stripe `cs_…`), its URL and when Stripe expires it. */
    sessionId: text('session_id'),
    sessionUrl: text('session_url'),
    sessionExpiresAt: tz('session_expires_at'),
    completedAt: tz('completed_at'),
  },
  (t) => [index('pay_links_project_user_idx').on(t.projectId, t.userId, t.createdAt), index('pay_links_expires_idx').on(t.expiresAt)],
);

/**
 * A portal link: single use. Opening it spends it and starts a short browser session (the cookie's
 * secret, kept as its digest too) under which the page and its billing button work.
 */
export const portalLinks = pgTable(
  'portal_links',
  {
    tokenHash: text('token_hash').primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
    usedAt: tz('used_at'),
    sessionHash: text('session_hash'),
    sessionExpiresAt: tz('session_expires_at'),
  },
  (t) => [index('portal_links_expires_idx').on(t.expiresAt)],
);
