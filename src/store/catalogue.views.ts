import { sql } from 'drizzle-orm';
import type { PlanView } from '../domain/plans/plan.view.js';
import { ON_EXPIRY_BY_KIND } from '../domain/targets/target-rules.js';
import type { OnExpiry, TargetView } from '../domain/targets/target.view.js';
import { activeAt } from './rule-twins.js';

/**
 * The plan and target objects as the API and events show them, built in SQL. A write inserts its
 * event and returns its object from the same expression in the same statement, so the two cannot
 * drift (like `membershipJson` in memberships.store.ts). Counts are computed here at read time,
 * never stored.
 */

/**
 * `SELECT` of `source` (a table or CTE with the targets columns) plus its two computed counts.
 * plan_count: plans not deleted that grant it. participant_count: distinct users with a membership
 * active at `at` (activeAt, the app's clock as for the memberships' own status; the stored
 * `status` is the expiry sweeper's marker, never read) on any plan granting it: a deleted plan's
 * members keep their access until their end date, so they still count.
 */
export const withCounts = (source: string, at: Date) =>
  sql`SELECT s.*,
    (SELECT count(*) FROM plan_targets c_pt JOIN plans c_p ON c_p.id = c_pt.plan_id
      WHERE c_pt.target_id = s.id AND c_p.deleted_at IS NULL)::int AS plan_count,
    (SELECT count(DISTINCT c_m.user_id) FROM plan_targets c_pt JOIN memberships c_m ON c_m.plan_id = c_pt.plan_id
      WHERE c_pt.target_id = s.id AND c_m.project_id = s.project_id
        AND ${activeAt(sql`c_m.end_date`, at)})::int AS participant_count
    FROM ${sql.raw(source)} s`;

/**
 * The `on_expiry` in effect on the target row `alias`: its own, or its kind's default
 * (ON_EXPIRY_BY_KIND, the first value of each kind), as the API shows it and the planner copies it.
 */
export const effectiveOnExpiry = (alias: string) => {
  const cases = Object.entries(ON_EXPIRY_BY_KIND).flatMap(([platform, kinds]) =>
    Object.entries(kinds).map(([kind, values]) => `WHEN '${platform}/${kind}' THEN '${values[0]}'`),
  );
  return sql<OnExpiry>`coalesce(${sql.raw(`${alias}.on_expiry`)}, CASE ${sql.raw(`${alias}.platform || '/' || ${alias}.kind`)}
    ${sql.raw(cases.join(' '))} ELSE 'none' END)`;
};

/** The target object of a relation `alias` made by `withCounts`. */
export const targetJson = (alias: string) => {
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  return sql<TargetView>`jsonb_build_object(
    'target_id', ${c('id')}, 'target_name', ${c('name')}, 'platform', ${c('platform')}, 'kind', ${c('kind')},
    'external_id', ${c('external_id')}, 'is_enabled', ${c('is_enabled')}, 'plan_count', ${c('plan_count')},
    'parent_target_id', ${c('parent_target_id')}, 'participant_count', ${c('participant_count')},
    'on_expiry', ${effectiveOnExpiry(alias)}, 'health', ${c('health')}, 'health_error', ${c('health_error')})`;
};

/**
 * The plan object of a relation `alias` with the plans columns. `plan_targets` holds the target
 * objects it grants, in the order they were added, their participants counted at `at` (withCounts).
 */
/**
 * The plan's optional fields, each present only when set (docs/plans-targets.md): `trial_days`
 * and `reminder_offsets`. A plan without them reads exactly as the v2 plan object.
 */
export const planExtrasJson = (alias: string) =>
  sql.raw(`jsonb_strip_nulls(jsonb_build_object('trial_days', ${alias}.trial_days, 'reminder_offsets', ${alias}.reminder_offsets))`);

export const planJson = (alias: string, at: Date) => {
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  return sql<PlanView>`jsonb_build_object(
    'plan_id', ${c('id')}, 'plan_name', ${c('name')}, 'plan_price', ${c('price')}::text, 'plan_currency', ${c('currency')},
    'plan_duration', ${c('duration')}, 'plan_price_formatted', ${c('price_formatted')},
    'plan_data', jsonb_build_object('plan_recurring', ${c('recurring')}, 'plan_one_time', ${c('one_time')}),
    'plan_targets', (
      SELECT coalesce(jsonb_agg(${targetJson('pj_t')} ORDER BY pj_pt.created_at, pj_t.id), '[]'::jsonb)
      FROM plan_targets pj_pt JOIN (${withCounts('targets', at)}) pj_t ON pj_t.id = pj_pt.target_id
      WHERE pj_pt.plan_id = ${c('id')})) || ${planExtrasJson(alias)}`;
};
