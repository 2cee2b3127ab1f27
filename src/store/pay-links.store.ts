import { sql } from 'drizzle-orm';
import type { LinkSession, NewPayLink, PayLinkRecord, PayLinkStatements } from '../domain/front-desk/pay-link-statements.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';

/**
 * `pay_links` (docs/front-desk.md, "Pay links"): a link's row by the digest of its id, the
 * Checkout Session it made, and its use. PayLinksService decides; these are its statements.
 */
export class PayLinksStore implements PayLinkStatements {
  constructor(private readonly db: Db) {}

  async insert(link: NewPayLink): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO pay_links (id_hash, project_id, plan_id, user_id, coupon, created_at, expires_at)
      VALUES (${link.idHash}, ${link.projectId}, ${link.planId}, ${link.userId}, ${link.coupon}, ${at(link.createdAt)}, ${at(link.expiresAt)})`);
  }

  async find(idHash: string): Promise<PayLinkRecord | null> {
    const rows = rowsOf<{
      project_id: string;
      plan_id: string;
      user_id: string;
      coupon: string | null;
      expires_at: string | Date;
      merchant_account_id: string | null;
      session_id: string | null;
      session_url: string | null;
      session_expires_at: string | Date | null;
      completed_at: string | Date | null;
    }>(
      await this.db.execute(sql`
        SELECT project_id, plan_id, user_id, coupon, expires_at, merchant_account_id, session_id, session_url, session_expires_at, completed_at
        FROM pay_links WHERE id_hash = ${idHash}`),
    );
    const r = rows[0];
    if (!r) return null;
    return {
      projectId: r.project_id,
      planId: r.plan_id,
      userId: r.user_id,
      coupon: r.coupon,
      expiresAt: new Date(r.expires_at),
      merchantAccountId: r.merchant_account_id,
      sessionId: r.session_id,
      sessionUrl: r.session_url,
      sessionExpiresAt: r.session_expires_at === null ? null : new Date(r.session_expires_at),
      completedAt: r.completed_at === null ? null : new Date(r.completed_at),
    };
  }

  async setSession(idHash: string, s: LinkSession): Promise<void> {
    await this.db.execute(sql`
      UPDATE pay_links SET merchant_account_id = ${s.merchantAccountId}, session_id = ${s.sessionId}, session_url = ${s.sessionUrl},
        session_expires_at = ${at(s.sessionExpiresAt)}
      WHERE id_hash = ${idHash} AND completed_at IS NULL`);
  }

  async markCompleted(idHash: string, now: Date): Promise<boolean> {
    const rows = rowsOf(await this.db.execute(sql`UPDATE pay_links SET completed_at = ${at(now)} WHERE id_hash = ${idHash} AND completed_at IS NULL RETURNING id_hash`));
    return rows.length > 0;
  }

  async sessionPaid(projectId: string, sessionId: string): Promise<boolean> {
    const rows = rowsOf(
      await this.db.execute(sql`SELECT 1 FROM payments WHERE project_id = ${projectId} AND provider = 'stripe' AND checkout_session_id = ${sessionId} AND status = 'succeeded' LIMIT 1`),
    );
    return rows.length > 0;
  }
}
