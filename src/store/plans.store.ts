import { sql } from 'drizzle-orm';
import { systemClock, type Clock } from '../domain/clock.js';
import type { PlanFields } from '../domain/plans/plan-rules.js';
import type { PlanTerms, PlanView } from '../domain/plans/plan.view.js';
import type { Platform } from '../domain/targets/target.view.js';
import { planExtrasJson, planJson } from './catalogue.views.js';
import { rowsOf, type Db } from '../database/db.js';
import { preparedStatement } from '../database/prepared.js';
import { insertEvent } from './outbox.js';

/**
 * Plans, the targets they grant, and their outbox rows. Every write commits with its event; the
 * plan returned and the plan in the event come from the same SQL (catalogue.views.ts). A deleted
 * plan keeps its row (`deleted_at`), so its members keep `plan_name` and their access until they
 * end; every read here hides it.
 */

export type LinkOutcome =
  | { plan: PlanView }
  | 'plan_missing'
  | 'target_missing'
  /** The plan already grants targets of another platform (docs/access.md, "Whose id is it"). */
  | { mixed: { granted: Platform; adding: Platform } };
export type UnlinkOutcome = 'removed' | 'plan_missing' | 'target_missing' | 'not_linked';

const offsetsJson = (offsets: string[] | null): string | null => (offsets === null ? null : JSON.stringify(offsets));

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

const live = (projectId: string, planId: string) =>
  sql`project_id = ${projectId} AND id = ${planId} AND deleted_at IS NULL`;

/** One event of `type` per row of `source` (a relation with the plans columns), carrying that plan. */
const planEvent = (type: 'plan.created' | 'plan.updated' | 'plan.deleted', source: string, at: Date) =>
  insertEvent(type, { projectId: sql`project_id`, data: { plan: planJson(source, at) }, from: sql`FROM ${sql.raw(source)}` });

/**
 * A live plan's terms, the fields of planJson (catalogue.views.ts) but its targets: every pay link
 * opened and every checkout reads them, so a named prepared statement.
 */
const termsStatement = preparedStatement<{ projectId: string; planId: string }>(
  'tenure_plan_terms',
  (p) => sql`
    SELECT jsonb_build_object(
      'plan_id', id, 'plan_name', name, 'plan_price', price::text, 'plan_currency', currency,
      'plan_duration', duration, 'plan_price_formatted', price_formatted,
      'plan_data', jsonb_build_object('plan_recurring', recurring, 'plan_one_time', one_time)) || ${planExtrasJson('plans')} AS plan
    FROM plans WHERE project_id = ${p.projectId}::uuid AND id = ${p.planId}::uuid AND deleted_at IS NULL`,
);

/**
 * The store is given the app's clock: a plan shows its targets' participants, the members active
 * at that clock's now (src/domain/memberships/active.ts), as memberships show their status.
 */
export class PlansStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * A new plan with its `plan.created` event. `id` keeps an id the plan had elsewhere (a move from
   * the hosted product, docs/moving-in.md); null when a plan, of any project or deleted, holds it.
   */
  async create(projectId: string, f: PlanFields, id: string | null = null): Promise<PlanView | null> {
    const at = this.clock.now();
    const result = await this.db.execute(sql`
      WITH ins AS (
        INSERT INTO plans (id, project_id, name, price, currency, duration, price_formatted, recurring, one_time, trial_days, reminder_offsets)
        VALUES (COALESCE(${id}::uuid, gen_random_uuid()), ${projectId}, ${f.name}, ${f.price}::numeric, ${f.currency}, ${f.duration}, ${f.priceFormatted},
                ${f.recurring}, ${f.oneTime}, ${f.trialDays}::int, ${offsetsJson(f.reminderOffsets)}::jsonb)
        ON CONFLICT (id) DO NOTHING
        RETURNING *
      ), ev AS (${planEvent('plan.created', 'ins', at)})
      SELECT ${planJson('ins', at)} AS plan FROM ins`);
    return rowsOf<{ plan: PlanView }>(result)[0]?.plan ?? null;
  }

  async get(projectId: string, planId: string): Promise<PlanView | null> {
    const result = await this.db.execute(sql`SELECT ${planJson('p', this.clock.now())} AS plan FROM plans p WHERE ${live(projectId, planId)}`);
    return rowsOf<{ plan: PlanView }>(result)[0]?.plan ?? null;
  }

  /**
   * The plan without its targets (PlanTerms): a checkout needs no more, and planJson's targets count
   * their members, a cost that grows with the community (~15 ms of the database's CPU a read at
   * 20,000 members).
   */
  async terms(projectId: string, planId: string): Promise<PlanTerms | null> {
    return rowsOf<{ plan: PlanTerms }>(await termsStatement.execute(this.db, { projectId, planId }))[0]?.plan ?? null;
  }

  /** Newest first, ties broken by id so pages are stable. */
  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: PlanView[]; total: number }> {
    const where = sql`project_id = ${projectId} AND deleted_at IS NULL`;
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        SELECT ${planJson('p', this.clock.now())} AS plan FROM (
          SELECT * FROM plans WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}
        ) p ORDER BY p.created_at DESC, p.id DESC`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM plans WHERE ${where}`),
    ]);
    return {
      items: rowsOf<{ plan: PlanView }>(items).map((r) => r.plan),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }

  /**
   * Locks the plan, hands its fields to `merge` (the service's rules), writes the result with its
   * `plan.updated` event. Locked so that two partial updates cannot each merge into a stale copy
   * (the display price is derived from price and currency). Null when there is no such plan.
   */
  async update(projectId: string, planId: string, merge: (current: PlanFields) => PlanFields | null): Promise<PlanView | null> {
    return this.db.transaction(async (tx) => {
      const locked = await tx.execute(sql`
        SELECT name, price::text AS price, currency, duration, price_formatted AS "priceFormatted", recurring,
               one_time AS "oneTime", trial_days AS "trialDays", reminder_offsets AS "reminderOffsets"
        FROM plans WHERE ${live(projectId, planId)} FOR UPDATE`);
      const row = rowsOf<PlanFields>(locked)[0];
      if (!row) return null;
      const current = { ...row, reminderOffsets: typeof row.reminderOffsets === 'string' ? (JSON.parse(row.reminderOffsets) as string[]) : row.reminderOffsets };
      // Null: the merge was refused (the service says why); nothing is written.
      const f = merge(current);
      if (!f) return null;
      return this.touch(tx, planId, sql`name = ${f.name}, price = ${f.price}::numeric, currency = ${f.currency},
        duration = ${f.duration}, price_formatted = ${f.priceFormatted}, recurring = ${f.recurring}, one_time = ${f.oneTime},
        trial_days = ${f.trialDays}::int, reminder_offsets = ${offsetsJson(f.reminderOffsets)}::jsonb, updated_at = now()`);
    });
  }

  /** Soft-deletes a plan with its `plan.deleted` event (the plan as it was); false when there was none. */
  async delete(projectId: string, planId: string): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH del AS (
        UPDATE plans SET deleted_at = now(), updated_at = now() WHERE ${live(projectId, planId)} RETURNING *
      ), ev AS (${planEvent('plan.deleted', 'del', this.clock.now())})
      SELECT id FROM del`);
    return rowsOf(result).length > 0;
  }

  /**
   * Makes the plan grant a target of the same project. Adding a target the plan already grants
   * changes nothing and writes no event. The target is locked (FOR KEY SHARE) so that it cannot be
   * deleted between the check and the link; the plan is locked, so two links of one plan take
   * turns and the second sees the first's platform.
   */
  async addTarget(projectId: string, planId: string, targetId: string): Promise<LinkOutcome> {
    return this.db.transaction(async (tx) => {
      if (!(await this.lockPlan(tx, projectId, planId))) return 'plan_missing';
      const target = await tx.execute(sql`
        SELECT platform FROM targets WHERE project_id = ${projectId} AND id = ${targetId} FOR KEY SHARE`);
      const adding = rowsOf<{ platform: Platform }>(target)[0]?.platform;
      if (!adding) return 'target_missing';
      const other = await tx.execute(sql`
        SELECT t.platform FROM plan_targets pt JOIN targets t ON t.id = pt.target_id
        WHERE pt.plan_id = ${planId} AND t.platform <> ${adding} LIMIT 1`);
      const granted = rowsOf<{ platform: Platform }>(other)[0]?.platform;
      if (granted) return { mixed: { granted, adding } };
      const linked = await tx.execute(sql`
        INSERT INTO plan_targets (plan_id, target_id) VALUES (${planId}, ${targetId})
        ON CONFLICT (plan_id, target_id) DO NOTHING RETURNING plan_id`);
      if (rowsOf(linked).length === 0) {
        const unchanged = await tx.execute(sql`SELECT ${planJson('p', this.clock.now())} AS plan FROM plans p WHERE p.id = ${planId}`);
        return { plan: rowsOf<{ plan: PlanView }>(unchanged)[0]!.plan };
      }
      return { plan: await this.touch(tx, planId, sql`updated_at = now()`) };
    });
  }

  /** Stops the plan granting a target, with a `plan.updated` event. */
  async removeTarget(projectId: string, planId: string, targetId: string): Promise<UnlinkOutcome> {
    return this.db.transaction(async (tx) => {
      if (!(await this.lockPlan(tx, projectId, planId))) return 'plan_missing';
      const unlinked = await tx.execute(sql`
        DELETE FROM plan_targets WHERE plan_id = ${planId} AND target_id = ${targetId} RETURNING target_id`);
      if (rowsOf(unlinked).length === 0) {
        const target = await tx.execute(sql`SELECT id FROM targets WHERE project_id = ${projectId} AND id = ${targetId}`);
        return rowsOf(target).length === 0 ? 'target_missing' : 'not_linked';
      }
      await this.touch(tx, planId, sql`updated_at = now()`);
      return 'removed';
    });
  }

  private async lockPlan(tx: Tx, projectId: string, planId: string): Promise<boolean> {
    return rowsOf(await tx.execute(sql`SELECT id FROM plans WHERE ${live(projectId, planId)} FOR UPDATE`)).length > 0;
  }

  /** Sets `assignments` (updated_at among them) on a plan locked by `tx` and writes its `plan.updated` event. */
  private async touch(tx: Tx, planId: string, assignments: ReturnType<typeof sql>): Promise<PlanView> {
    const at = this.clock.now();
    const result = await tx.execute(sql`
      WITH upd AS (
        UPDATE plans SET ${assignments} WHERE id = ${planId} RETURNING *
      ), ev AS (${planEvent('plan.updated', 'upd', at)})
      SELECT ${planJson('upd', at)} AS plan FROM upd`);
    return rowsOf<{ plan: PlanView }>(result)[0]!.plan;
  }
}
