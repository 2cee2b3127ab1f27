import { sql } from 'drizzle-orm';
import type { LinkSession, NewPayLink, PayLinkRecord, PayLinkStatements } from '../domain/front-desk/pay-link-statements.js';
import { rowsOf, type Db } from '../database/db.js';
import { preparedStatement } from '../database/prepared.js';
import { at } from '../database/sql.js';

/**
 * `pay_links` (docs/front-desk.md, "Pay links"): a link's row by the digest of its id, the
 * Checkout Session it made, and its use. PayLinksService decides; these are its statements.
 */

interface FoundRow {
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
}

// Every `GET /pay/{id}` reads its link, and the first open keeps its session: named prepared
// statements (src/database/prepared.ts), so neither is built, parsed and planned again per open.
const findStatement = preparedStatement<{ idHash: string }>(
  'tenure_pay_link_find',
  (p) => sql`
    SELECT project_id, plan_id, user_id, coupon, expires_at, merchant_account_id, session_id, session_url, session_expires_at, completed_at
    FROM pay_links WHERE id_hash = ${p.idHash}`,
);

const setSessionStatement = preparedStatement<{ idHash: string; merchantAccountId: string; sessionId: string; sessionUrl: string; sessionExpiresAt: string }>(
  'tenure_pay_link_set_session',
  (p) => sql`
    UPDATE pay_links SET merchant_account_id = ${p.merchantAccountId}::uuid, session_id = ${p.sessionId}, session_url = ${p.sessionUrl},
      session_expires_at = ${p.sessionExpiresAt}::timestamptz
    WHERE id_hash = ${p.idHash} AND completed_at IS NULL`,
);
export class PayLinksStore implements PayLinkStatements {
  constructor(private readonly db: Db) {}

  async insert(link: NewPayLink): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO pay_links (id_hash, project_id, plan_id, user_id, coupon, created_at, expires_at)
      VALUES (${link.idHash}, ${link.projectId}, ${link.planId}, ${link.userId}, ${link.coupon}, ${at(link.createdAt)}, ${at(link.expiresAt)})`);
  }

  async find(idHash: string): Promise<PayLinkRecord | null> {
    const r = rowsOf<FoundRow>(await findStatement.execute(this.db, { idHash }))[0];
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
    await setSessionStatement.execute(this.db, {
      idHash,
      merchantAccountId: s.merchantAccountId,
      sessionId: s.sessionId,
      sessionUrl: s.sessionUrl,
      sessionExpiresAt: s.sessionExpiresAt.toISOString(),
    });
  }

  async markCompleted(idHash: string, now: Date): Promise<boolean> {
    const rows = rowsOf(await this.db.execute(sql`UPDATE pay_links SET completed_at = ${at(now)} WHERE id_hash = ${idHash} AND completed_at IS NULL RETURNING id_hash`));
    return rows.length > 0;
  }

  async sessionPaid(projectId: string, sessionId: string): Promise<boolean> {
    const rows = rowsOf(
      await this.db.execute(sql`
        SELECT 1 FROM payments WHERE project_id = ${projectId} AND provider = 'stripe' AND checkout_session_id = ${sessionId} AND status = 'succeeded'
        UNION ALL SELECT 1 FROM trials WHERE project_id = ${projectId} AND session_id = ${sessionId} AND state = 'started'
        LIMIT 1`),
    );
    return rows.length > 0;
  }
}
