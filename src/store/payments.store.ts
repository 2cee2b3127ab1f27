import { sql, type SQL } from 'drizzle-orm';
import type { PaymentView } from '../domain/payments/payment.view.js';
import { rowsOf, type Db } from './db.js';
import { paymentJson } from './stripe-events.store.js';

/**
 * Payments (docs/payments.md): what a checkout reads of the project, and the payments as the API
 * lists them; src/store/stripe-events.store.ts writes them from the provider's events.
 */
export class PaymentsStore {
  constructor(private readonly db: Db) {}

  /** reference.md "Users and bans": a banned user can get no new membership, so no checkout either. */
  async isBanned(projectId: string, userId: string): Promise<boolean> {
    const result = await this.db.execute(sql`SELECT 1 FROM bans WHERE project_id = ${projectId} AND user_id = ${userId}`);
    return rowsOf(result).length > 0;
  }

  /** The project's payments, newest first, ties broken by id so pages are stable. */
  async list(projectId: string, filter: { userId?: string; status?: string; limit: number; offset: number }): Promise<{ items: PaymentView[]; total: number }> {
    const conditions: SQL[] = [sql`p.project_id = ${projectId}`];
    if (filter.userId) conditions.push(sql`p.user_id = ${filter.userId}`);
    if (filter.status) conditions.push(sql`p.status = ${filter.status}`);
    const where = sql.join(conditions, sql` AND `);
    const [page, count] = await Promise.all([
      this.db.execute(sql`SELECT ${paymentJson('p')} AS payment FROM payments p WHERE ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM payments p WHERE ${where}`),
    ]);
    return { items: rowsOf<{ payment: PaymentView }>(page).map((r) => r.payment), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }
}
