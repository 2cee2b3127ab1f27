import { jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
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
