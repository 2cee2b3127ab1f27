import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { activeAt } from './rule-twins.js';

/** The dashboard's overview figures (docs/dashboard.md, "Overview"): counts capped so the page stays cheap at any size. */
export interface OverviewCounts {
  /** Active memberships, up to the cap (`cap + 1` means "more than cap"). */
  active: number;
  /** Active memberships ending within the next 7 days, up to the cap. */
  endingSoon: number;
  plans: number;
  admins: number;
}

export class DashboardOverviewStore {
  constructor(private readonly db: Db) {}

  /** Each count reads at most `cap + 1` index entries (memberships_project_end_idx). */
  async counts(projectId: string, now: Date, cap: number): Promise<OverviewCounts> {
    const week = new Date(now.getTime() + 7 * 86_400_000);
    const rows = rowsOf<OverviewCounts>(
      await this.db.execute(sql`
        SELECT
          (SELECT count(*)::int FROM (SELECT 1 FROM memberships m WHERE m.project_id = ${projectId} AND ${activeAt(sql.raw('m.end_date'), now)} LIMIT ${cap + 1}) a) AS active,
          (SELECT count(*)::int FROM (SELECT 1 FROM memberships m WHERE m.project_id = ${projectId} AND ${activeAt(sql.raw('m.end_date'), now)}
                                        AND m.end_date <= ${week.toISOString()}::timestamptz LIMIT ${cap + 1}) e) AS "endingSoon",
          (SELECT count(*)::int FROM plans p WHERE p.project_id = ${projectId} AND p.deleted_at IS NULL) AS plans,
          (SELECT count(*)::int FROM admins a WHERE a.project_id = ${projectId}) AS admins`),
    );
    return rows[0]!;
  }
}
