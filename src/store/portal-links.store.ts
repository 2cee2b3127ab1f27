import { sql } from 'drizzle-orm';
import type { PortalLinkRecord, PortalLinkStatements } from '../domain/front-desk/portal-link-statements.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';

const dateOrNull = (v: string | Date | null): Date | null => (v === null ? null : new Date(v));

/** `portal_links` (docs/front-desk.md, "The portal"): PortalService decides; these are its statements. */
export class PortalLinksStore implements PortalLinkStatements {
  constructor(private readonly db: Db) {}

  async insert(link: { tokenHash: string; projectId: string; userId: string; createdAt: Date; expiresAt: Date }): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO portal_links (token_hash, project_id, user_id, created_at, expires_at)
      VALUES (${link.tokenHash}, ${link.projectId}, ${link.userId}, ${at(link.createdAt)}, ${at(link.expiresAt)})`);
  }

  async find(tokenHash: string): Promise<PortalLinkRecord | null> {
    const r = rowsOf<{
      project_id: string;
      user_id: string;
      expires_at: string | Date;
      used_at: string | Date | null;
      session_hash: string | null;
      session_expires_at: string | Date | null;
    }>(
      await this.db.execute(sql`
        SELECT project_id, user_id, expires_at, used_at, session_hash, session_expires_at FROM portal_links WHERE token_hash = ${tokenHash}`),
    )[0];
    if (!r) return null;
    return {
      projectId: r.project_id,
      userId: r.user_id,
      expiresAt: new Date(r.expires_at),
      usedAt: dateOrNull(r.used_at),
      sessionHash: r.session_hash,
      sessionExpiresAt: dateOrNull(r.session_expires_at),
    };
  }

  async claim(tokenHash: string, session: { sessionHash: string; sessionExpiresAt: Date }, now: Date): Promise<boolean> {
    const rows = rowsOf(
      await this.db.execute(sql`
        UPDATE portal_links SET used_at = ${at(now)}, session_hash = ${session.sessionHash}, session_expires_at = ${at(session.sessionExpiresAt)}
        WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${at(now)}
        RETURNING token_hash`),
    );
    return rows.length > 0;
  }

  async billingCustomer(projectId: string, userId: string): Promise<{ customerId: string; merchantAccountId: string } | null> {
    const r = rowsOf<{ customer_id: string; merchant_account_id: string }>(
      await this.db.execute(sql`
        SELECT customer_id, merchant_account_id FROM payments
        WHERE project_id = ${projectId} AND user_id = ${userId} AND provider = 'stripe' AND customer_id IS NOT NULL AND merchant_account_id IS NOT NULL
        ORDER BY created_at DESC, id DESC LIMIT 1`),
    )[0];
    return r ? { customerId: r.customer_id, merchantAccountId: r.merchant_account_id } : null;
  }
}
