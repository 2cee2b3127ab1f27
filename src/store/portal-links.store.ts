import { sql } from 'drizzle-orm';
import type {
  PortalAccessRecord,
  PortalLinkRecord,
  PortalLinkStatements,
  PortalMemberStatements,
  PortalMembershipRecord,
  PortalJoinRecord,
  PortalPageRecord,
} from '../domain/front-desk/portal-link-statements.js';
import type { InvoicingDetails } from '../domain/invoicing/invoicing-rules.js';
import { rowsOf, type Db } from '../database/db.js';
import { preparedStatement } from '../database/prepared.js';
import { at, iso } from '../database/sql.js';
import { DIGITS_SQL } from './payments.store.js';
import { statusAt } from './rule-twins.js';
import { GUILD_OF } from './web.store.js';

/** A currency's decimal digits (JPY 0, KWD 3, else 2), as the payments API counts them. */
const DIGITS = sql.raw(DIGITS_SQL);

const dateOrNull = (v: string | Date | null): Date | null => (v === null ? null : new Date(v));

// Every open of the portal reads its link and then the page: named prepared statements
// (src/database/prepared.ts), so neither is built again per open, nor parsed and planned again on
// a PostgreSQL connection that ran it before.
const findStatement = preparedStatement<{ tokenHash: string }>(
  'tenure_portal_link_find',
  (p) => sql`SELECT project_id, user_id, expires_at, used_at, session_hash, session_expires_at FROM portal_links WHERE token_hash = ${p.tokenHash}`,
);

const pageStatement = preparedStatement<{ projectId: string; userId: string; now: string; limit: number }>(
  'tenure_portal_page',
  (p) => sql`
    SELECT
      (SELECT coalesce(json_agg(json_build_object(
          'id', m.id, 'planId', m.plan_id, 'planName', pl.name, 'status', ${statusAt(sql`m.end_date`, p.now)}, 'endDate', ${iso(sql`m.end_date`)},
          'subscriptionId', m.subscription_id, 'subscriptionStatus', m.subscription_status, 'cancelAtPeriodEnd', m.subscription_cancel_at_period_end)
          ORDER BY m.end_date DESC, m.id), '[]'::json)
       FROM memberships m LEFT JOIN plans pl ON pl.id = m.plan_id WHERE m.project_id = ${p.projectId} AND m.user_id = ${p.userId}) AS memberships,
      (SELECT coalesce(json_agg(json_build_object('targetId', a.target_id, 'targetName', t.name, 'platform', a.platform, 'kind', a.kind, 'state', a.state,
          'guildId', CASE WHEN a.platform = 'discord' THEN ${GUILD_OF} END)
          ORDER BY a.platform, t.name, a.target_id), '[]'::json)
       FROM access a LEFT JOIN targets t ON t.id = a.target_id LEFT JOIN targets g ON g.id = t.parent_target_id
       WHERE a.project_id = ${p.projectId} AND a.user_id = ${p.userId} AND a.desired = 'granted') AS access,
      (SELECT coalesce(json_agg(json_build_object('guildId', j.guild_id, 'state', j.state, 'lastError', j.last_error)), '[]'::json)
       FROM (SELECT DISTINCT ON (guild_id) guild_id, state, last_error FROM guild_joins
             WHERE project_id = ${p.projectId} AND user_id = ${p.userId} AND guild_id IS NOT NULL ORDER BY guild_id, created_at DESC, id DESC) j) AS joins,
      EXISTS (SELECT 1 FROM integrations i WHERE i.project_id = ${p.projectId} AND i.platform = 'discord'
              AND i.application_id IS NOT NULL AND i.client_secret_sealed IS NOT NULL) AS discord_join,
      (SELECT coalesce(json_agg(json_build_object('planId', x.plan_id, 'createdAt', ${iso(sql`x.created_at`)}, 'amount', x.amount, 'currency', x.currency, 'status', x.status)
          ORDER BY x.created_at DESC, x.id DESC), '[]'::json)
       FROM (SELECT id, plan_id, created_at, currency, status,
               round(amount_minor::numeric / power(10::numeric, ${DIGITS}), ${DIGITS})::text AS amount
             FROM payments WHERE project_id = ${p.projectId} AND user_id = ${p.userId} ORDER BY created_at DESC, id DESC LIMIT ${p.limit}::int) x) AS payments,
      (EXISTS (SELECT 1 FROM payments WHERE project_id = ${p.projectId} AND user_id = ${p.userId} AND provider = 'stripe'
               AND customer_id IS NOT NULL AND merchant_account_id IS NOT NULL)
       OR EXISTS (SELECT 1 FROM member_stripe_customers WHERE project_id = ${p.projectId} AND user_id = ${p.userId})) AS has_customer,
      -- The invoicing store owns the row and its writes; the page only reads it here, with the rest.
      (SELECT json_build_object('name', i.name, 'company', i.company, 'address', i.address, 'vat_id', i.vat_id, 'updatedAt', ${iso(sql`i.updated_at`)})
       FROM member_invoicing i WHERE i.project_id = ${p.projectId} AND i.user_id = ${p.userId}) AS invoicing`,
);

/**
 * `portal_links` (docs/portal.md), and what the portal reads of the member's memberships, access
 * and payments: PortalService decides; these are its statements.
 */
export class PortalLinksStore implements PortalLinkStatements, PortalMemberStatements {
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
    }>(await findStatement.execute(this.db, { tokenHash }))[0];
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

  async membershipsOf(projectId: string, userId: string, now: Date): Promise<PortalMembershipRecord[]> {
    const rows = rowsOf<{
      id: string;
      plan_id: string | null;
      plan_name: string | null;
      status: 'active' | 'expired';
      end_date: string | Date;
      subscription_id: string | null;
      subscription_status: string | null;
      subscription_cancel_at_period_end: boolean;
    }>(
      await this.db.execute(sql`
        SELECT m.id, m.plan_id, p.name AS plan_name, ${statusAt(sql`m.end_date`, now)} AS status, m.end_date,
               m.subscription_id, m.subscription_status, m.subscription_cancel_at_period_end
        FROM memberships m LEFT JOIN plans p ON p.id = m.plan_id
        WHERE m.project_id = ${projectId} AND m.user_id = ${userId}
        ORDER BY m.end_date DESC, m.id`),
    );
    return rows.map((r) => ({
      id: r.id,
      planId: r.plan_id,
      planName: r.plan_name,
      status: r.status,
      endDate: new Date(r.end_date),
      subscriptionId: r.subscription_id,
      subscriptionStatus: r.subscription_status,
      cancelAtPeriodEnd: r.subscription_cancel_at_period_end,
    }));
  }

  /**
   * The page's memberships, access, latest payments, whether a billing customer exists and the
   * invoicing details, in one statement: the same reads as membershipsOf, accessOf, the invoicing
   * store's billingCustomer and find, with the payments as the API lists them, so an open costs one
   * round trip for the member's things.
   */
  async pageOf(projectId: string, userId: string, now: Date, limit: number): Promise<PortalPageRecord> {
    const row = rowsOf<Record<'memberships' | 'access' | 'payments' | 'invoicing' | 'joins', unknown> & { has_customer: boolean; discord_join: boolean }>(
      await pageStatement.execute(this.db, { projectId, userId, now: now.toISOString(), limit }),
    )[0]!;
    const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
    const memberships = json<(Omit<PortalMembershipRecord, 'endDate'> & { endDate: string })[]>(row.memberships);
    const invoicing = json<(InvoicingDetails & { updatedAt: string }) | null>(row.invoicing);
    return {
      memberships: memberships.map((m) => ({ ...m, endDate: new Date(m.endDate) })),
      access: json<PortalAccessRecord[]>(row.access),
      payments: json<PortalPageRecord['payments']>(row.payments),
      hasBillingCustomer: row.has_customer,
      invoicing: invoicing && { ...invoicing, updatedAt: new Date(invoicing.updatedAt) },
      discordJoin: row.discord_join,
      joins: json<PortalJoinRecord[]>(row.joins),
    };
  }

  async accessOf(projectId: string, userId: string): Promise<PortalAccessRecord[]> {
    const rows = rowsOf<{ target_id: string; target_name: string | null; platform: 'discord' | 'telegram'; kind: string; state: string; guild_id: string | null }>(
      await this.db.execute(sql`
        SELECT a.target_id, t.name AS target_name, a.platform, a.kind, a.state, CASE WHEN a.platform = 'discord' THEN ${GUILD_OF} END AS guild_id
        FROM access a LEFT JOIN targets t ON t.id = a.target_id LEFT JOIN targets g ON g.id = t.parent_target_id
        WHERE a.project_id = ${projectId} AND a.user_id = ${userId} AND a.desired = 'granted'
        ORDER BY a.platform, t.name, a.target_id`),
    );
    return rows.map((r) => ({ targetId: r.target_id, targetName: r.target_name, platform: r.platform, kind: r.kind, state: r.state, guildId: r.guild_id }));
  }

  async subscriptionAccount(projectId: string, subscriptionId: string): Promise<string | null> {
    const r = rowsOf<{ merchant_account_id: string }>(
      await this.db.execute(sql`
        SELECT merchant_account_id FROM payments
        WHERE project_id = ${projectId} AND subscription_id = ${subscriptionId} AND provider = 'stripe' AND merchant_account_id IS NOT NULL
        ORDER BY created_at DESC, id DESC LIMIT 1`),
    )[0];
    return r ? r.merchant_account_id : null;
  }
}
