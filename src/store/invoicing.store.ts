import { sql, type SQL } from 'drizzle-orm';
import type { InvoicingAddress, InvoicingDetails } from '../domain/invoicing/invoicing-rules.js';
import type { InvoicingStatements } from '../domain/invoicing/invoicing-statements.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';

type Row = { name: string | null; company: string | null; address: InvoicingAddress | string | null; vat_id: string | null; updated_at: string | Date };

/**
 * `member_invoicing` (docs/portal.md, "Invoicing details") and `member_stripe_customers` ("One
 * customer per member"): InvoicingService decides; these are its statements.
 */
export class InvoicingStore implements InvoicingStatements {
  constructor(private readonly db: Db) {}

  async find(projectId: string, userId: string): Promise<(InvoicingDetails & { updatedAt: Date }) | null> {
    const r = rowsOf<Row>(
      await this.db.execute(sql`
        SELECT name, company, address, vat_id, updated_at FROM member_invoicing WHERE project_id = ${projectId} AND user_id = ${userId}`),
    )[0];
    return r ? detailsOf(r) : null;
  }

  async update(projectId: string, userId: string, patch: Partial<InvoicingDetails>, now: Date): Promise<InvoicingDetails & { updatedAt: Date }> {
    const has = (field: keyof InvoicingDetails) => patch[field] !== undefined;
    const address = patch.address === undefined || patch.address === null ? null : JSON.stringify(patch.address);
    // A field the patch does not name keeps the row's value (the inserted row's is null).
    const r = rowsOf<Row>(
      await this.db.execute(sql`
        INSERT INTO member_invoicing AS m (project_id, user_id, name, company, address, vat_id, updated_at)
        VALUES (${projectId}, ${userId}, ${patch.name ?? null}, ${patch.company ?? null}, ${address}::jsonb, ${patch.vat_id ?? null}, ${at(now)})
        ON CONFLICT (project_id, user_id) DO UPDATE SET
          name = CASE WHEN ${has('name')}::boolean THEN excluded.name ELSE m.name END,
          company = CASE WHEN ${has('company')}::boolean THEN excluded.company ELSE m.company END,
          address = CASE WHEN ${has('address')}::boolean THEN excluded.address ELSE m.address END,
          vat_id = CASE WHEN ${has('vat_id')}::boolean THEN excluded.vat_id ELSE m.vat_id END,
          updated_at = excluded.updated_at
        RETURNING name, company, address, vat_id, updated_at`),
    )[0]!;
    return detailsOf(r);
  }

  async billingCustomer(projectId: string, userId: string, merchantAccountId?: string): Promise<{ customerId: string; merchantAccountId: string } | null> {
    // On an account: the latest payment's customer only if it is on that account (an older
    // payment's on it is not looked for), else the one remembered there.
    const onAccount = (column: SQL) => (merchantAccountId === undefined ? sql`` : sql`AND ${column} = ${merchantAccountId}`);
    const r = rowsOf<{ customer_id: string; merchant_account_id: string }>(
      await this.db.execute(sql`
        SELECT customer_id, merchant_account_id FROM (
          (SELECT customer_id, merchant_account_id, 0 AS rank FROM payments
           WHERE project_id = ${projectId} AND user_id = ${userId} AND provider = 'stripe' AND customer_id IS NOT NULL AND merchant_account_id IS NOT NULL
           ORDER BY created_at DESC, id DESC LIMIT 1)
          UNION ALL
          (SELECT customer_id, merchant_account_id, 1 AS rank FROM member_stripe_customers
           WHERE project_id = ${projectId} AND user_id = ${userId} ${onAccount(sql`merchant_account_id`)} ORDER BY created_at DESC LIMIT 1)
        ) c WHERE true ${onAccount(sql`c.merchant_account_id`)} ORDER BY rank LIMIT 1`),
    )[0];
    return r ? { customerId: r.customer_id, merchantAccountId: r.merchant_account_id } : null;
  }

  async rememberCustomer(projectId: string, userId: string, merchantAccountId: string, customerId: string, now: Date): Promise<string> {
    // The no-op update makes RETURNING answer the row already there: the first customer stays.
    const r = rowsOf<{ customer_id: string }>(
      await this.db.execute(sql`
        INSERT INTO member_stripe_customers AS c (project_id, user_id, merchant_account_id, customer_id, created_at)
        VALUES (${projectId}, ${userId}, ${merchantAccountId}, ${customerId}, ${at(now)})
        ON CONFLICT (project_id, user_id, merchant_account_id) DO UPDATE SET customer_id = c.customer_id
        RETURNING customer_id`),
    )[0]!;
    return r.customer_id;
  }
}

function detailsOf(r: Row): InvoicingDetails & { updatedAt: Date } {
  const address = typeof r.address === 'string' ? (JSON.parse(r.address) as InvoicingAddress) : r.address;
  return { name: r.name, company: r.company, address, vat_id: r.vat_id, updatedAt: new Date(r.updated_at) };
}
