import { jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { merchantAccounts } from './payments.js';
import { projects } from './projects.js';

/**
 * A member's invoicing details (docs/portal.md, "Invoicing details"): who their invoices are made
 * out to, given through the API or the portal, and passed to Stripe as the customer's details.
 * No row until they are first given.
 */
export const memberInvoicing = pgTable(
  'member_invoicing',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    name: text('name'),
    company: text('company'),
    /** `{line1, line2, city, postal_code, state, country}` (src/domain/invoicing/invoicing-rules.ts), or null. */
    address: jsonb('address'),
    vatId: text('vat_id'),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] })],
);

/**
 * The Stripe customer tenure made for a member on a merchant account (docs/portal.md, "One
 * customer per member"): remembered as soon as Stripe answers, before any payment, so every later
 * checkout and Manage billing use it instead of making another. A customer belongs to one Stripe
 * account, hence one row per account.
 */
export const memberStripeCustomers = pgTable(
  'member_stripe_customers',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    merchantAccountId: uuid('merchant_account_id')
      .notNull()
      .references(() => merchantAccounts.id, { onDelete: 'cascade' }),
    customerId: text('customer_id').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId, t.merchantAccountId] })],
);
