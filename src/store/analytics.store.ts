import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';

/**
 * Money and growth's reads (docs/analytics.md): the facts the triggers of drizzle/functions.sql
 * append to analytics_days, folded and summed. Days are UTC dates (`YYYY-MM-DD`).
 */

export type AnalyticsUnit = 'day' | 'week' | 'month';

/**
 * Sums of the facts: `pre` (every day before the period) per plan and currency; or in the period,
 * per plan and currency (`bucket` null) or per bucket and currency (`planKey` null).
 */
export interface FactSums {
  pre: boolean;
  bucket: string | null;
  planKey: string | null;
  currency: string;
  started: number;
  ended: number;
  grossCount: number;
  grossMinor: number;
  refundedCount: number;
  refundedMinor: number;
  disputedCount: number;
  disputedMinor: number;
  failedCount: number;
  /** Exact numeric as PostgreSQL prints it. */
  mrrMinor: string;
}

const SUMS = ['members_started', 'members_ended', 'gross_count', 'gross_minor', 'refunded_count', 'refunded_minor', 'disputed_count', 'disputed_minor', 'failed_count', 'mrr_minor'] as const;

export class AnalyticsStore {
  constructor(private readonly db: Db) {}

  /**
   * Folds the project's appended rows into one row per (day, plan, currency), in one statement:
   * the rows it deletes are exactly the rows it adds up, so nothing is lost or counted twice, and
   * rows appended meanwhile stay for the next fold. One fold of a project at a time (a transaction
   * advisory lock): a read that finds one running reads without folding, which gives the same sums.
   */
  async fold(projectId: string): Promise<number> {
    const add = sql.raw(SUMS.map((c) => `${c} = analytics_days.${c} + excluded.${c}`).join(', '));
    const sums = sql.raw(SUMS.map((c) => `sum(${c})`).join(', '));
    const rows = rowsOf<{ n: number }>(
      await this.db.execute(sql`
        WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtext('tenure-analytics-fold'), hashtext(${projectId})) AS held),
        gone AS (
          DELETE FROM analytics_days WHERE project_id = ${projectId} AND NOT folded AND (SELECT held FROM lock)
          RETURNING *
        ), folded AS (
          INSERT INTO analytics_days (project_id, day, plan_key, currency, folded, ${sql.raw(SUMS.join(', '))})
          SELECT project_id, day, plan_key, currency, true, ${sums} FROM gone
          GROUP BY project_id, day, plan_key, currency
          ORDER BY day, plan_key, currency
          ON CONFLICT (project_id, day, plan_key, currency) WHERE folded DO UPDATE SET ${add}
          RETURNING 1
        )
        SELECT count(*)::int AS n FROM folded`),
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * The sums the view needs, in one scan of the project's rows before `to` (GROUPING SETS):
   * - `pre` rows (every day before `from`), per plan and currency: what was booked up to the start;
   * - period rows per plan and currency (`bucket` null): the totals by plan;
   * - period rows per bucket and currency (`planKey` null): a bucket is the day, ISO week or
   *   calendar month a day falls in, starting no earlier than `from`.
   */
  async sums(projectId: string, from: string, to: string, unit: AnalyticsUnit): Promise<FactSums[]> {
    const rows = rowsOf<Record<string, string | number | boolean | null>>(
      await this.db.execute(sql`
        SELECT f.pre, CASE WHEN GROUPING(f.bucket) = 0 THEN f.bucket END AS bucket,
          CASE WHEN GROUPING(f.plan_key) = 0 THEN f.plan_key::text END AS plan_key, f.currency,
          sum(members_started)::bigint AS started, sum(members_ended)::bigint AS ended,
          sum(gross_count)::bigint AS gross_count, sum(gross_minor)::bigint AS gross_minor,
          sum(refunded_count)::bigint AS refunded_count, sum(refunded_minor)::bigint AS refunded_minor,
          sum(disputed_count)::bigint AS disputed_count, sum(disputed_minor)::bigint AS disputed_minor,
          sum(failed_count)::bigint AS failed_count, sum(mrr_minor)::text AS mrr_minor
        FROM (
          SELECT d.*, d.day < ${from}::date AS pre,
            CASE WHEN d.day >= ${from}::date THEN to_char(greatest(date_trunc(${unit}, d.day)::date, ${from}::date), 'YYYY-MM-DD') END AS bucket
          FROM (
            -- Each kind through its own partial index.
            SELECT * FROM analytics_days WHERE project_id = ${projectId} AND day < ${to}::date AND folded
            UNION ALL
            SELECT * FROM analytics_days WHERE project_id = ${projectId} AND day < ${to}::date AND NOT folded
          ) d
        ) f
        GROUP BY GROUPING SETS ((f.pre, f.plan_key, f.currency), (f.pre, f.bucket, f.currency))
        HAVING NOT (f.pre AND GROUPING(f.plan_key) = 1)`),
    );
    return rows.map((r) => ({
      pre: r.pre === true,
      bucket: (r.bucket as string | null) ?? null,
      planKey: (r.plan_key as string | null) ?? null,
      currency: String(r.currency),
      started: Number(r.started),
      ended: Number(r.ended),
      grossCount: Number(r.gross_count),
      grossMinor: Number(r.gross_minor),
      refundedCount: Number(r.refunded_count),
      refundedMinor: Number(r.refunded_minor),
      disputedCount: Number(r.disputed_count),
      disputedMinor: Number(r.disputed_minor),
      failedCount: Number(r.failed_count),
      mrrMinor: String(r.mrr_minor),
    }));
  }

  /** The names of the project's plans, deleted ones too (their payments still count). */
  async planNames(projectId: string): Promise<Map<string, string>> {
    const rows = rowsOf<{ id: string; name: string }>(await this.db.execute(sql`SELECT id, name FROM plans WHERE project_id = ${projectId}`));
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
