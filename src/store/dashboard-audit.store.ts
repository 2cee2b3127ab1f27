import { sql } from 'drizzle-orm';
import type { AuditEntry, NewAuditEntry, Page } from '../domain/dashboard/dashboard.types.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';

/**
 * The dashboard's audit log (docs/dashboard.md, "Audit log"): one row per admin action, read newest
 * first. Built on a transaction's handle, `record` joins the change it records.
 */
export class DashboardAuditStore {
  constructor(private readonly db: Db) {}

  async record(e: NewAuditEntry): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO dashboard_audit (project_id, actor_user_id, session_id, action, subject, details, at)
      VALUES (${e.projectId}, ${e.actorUserId}, ${e.sessionId}, ${e.action}, ${e.subject ?? null}, ${JSON.stringify(e.details ?? {})}::jsonb, ${at(e.at)})`);
  }

  async list(projectId: string, page: Page): Promise<{ items: AuditEntry[]; total: number }> {
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        SELECT d.id, d.actor_user_id AS "actorUserId", coalesce(u.first_name, u.username) AS "actorName", d.session_id AS "sessionId",
               d.action, d.subject, d.details, d.at
        FROM dashboard_audit d LEFT JOIN users u ON u.project_id = d.project_id AND u.user_id = d.actor_user_id
        WHERE d.project_id = ${projectId} ORDER BY d.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM dashboard_audit WHERE project_id = ${projectId}`),
    ]);
    type Row = Omit<AuditEntry, 'at' | 'details'> & { at: Date | string; details: Record<string, unknown> | string };
    return {
      items: rowsOf<Row>(items).map((r) => ({ ...r, id: Number(r.id), details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details, at: new Date(r.at) })),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }
}
