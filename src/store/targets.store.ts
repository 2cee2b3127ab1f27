import { sql, type SQL } from 'drizzle-orm';
import { systemClock, type Clock } from '../domain/clock.js';
import type { OnExpiry, Platform, TargetKind, TargetView } from '../domain/targets/target.view.js';
import { planJson, targetJson, withCounts } from './catalogue.views.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { markWrites } from '../database/wakeups.js';

/**
 * Targets and their outbox rows. Every write commits with its events; the objects returned and
 * the events written come from the same SQL (src/store/catalogue.views.ts).
 */

export interface NewTarget {
  name: string;
  platform: Platform;
  kind: TargetKind;
  externalId: string;
  isEnabled: boolean;
  parentTargetId: string | null;
  /** Null: the kind's default (shown as such, never stored). */
  onExpiry: OnExpiry | null;
}

export interface TargetChange {
  target_id: string;
  is_enabled?: boolean;
  target_name?: string;
  /** Null puts the target back on its kind's default; left out, it is kept. */
  on_expiry?: OnExpiry | null;
}

export type CreateOutcome = { target: TargetView } | 'duplicate' | 'parent_missing';
export type DeleteOutcome = 'deleted' | 'missing' | 'has_children';

/** One event of `type` per row of `full_row` (made by withCounts), carrying that target. */
const targetEvent = (type: 'target.added' | 'target.updated' | 'target.removed', orderBy = sql``) =>
  insertEvent(type, { projectId: sql`project_id`, data: { target: targetJson('full_row') }, from: sql`FROM full_row ${orderBy}` });

/**
 * The store is given the app's clock: a target shows its participants, the members active at that
 * clock's now (src/domain/memberships/active.ts), as memberships show their status.
 */
export class TargetsStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Inserts a target with its `target.added` event. The parent is locked (FOR KEY SHARE) in the same
   * statement, so it cannot be deleted between the check and the insert.
   */
  async create(projectId: string, input: NewTarget): Promise<CreateOutcome> {
    const result = await this.db.execute(sql`
      WITH parent AS (
        SELECT id FROM targets WHERE project_id = ${projectId} AND id = ${input.parentTargetId}::uuid FOR KEY SHARE
      ), ins AS (
        INSERT INTO targets (project_id, name, platform, kind, external_id, is_enabled, parent_target_id, on_expiry)
        SELECT ${projectId}::uuid, ${input.name}::text, ${input.platform}::text, ${input.kind}::text, ${input.externalId}::text,
               ${input.isEnabled}::boolean, ${input.parentTargetId}::uuid, ${input.onExpiry}::text
        WHERE ${input.parentTargetId}::uuid IS NULL OR EXISTS (SELECT 1 FROM parent)
        ON CONFLICT (project_id, platform, external_id) DO NOTHING
        RETURNING *
      ), full_row AS (${withCounts('ins', this.clock.now())}), ev AS (${targetEvent('target.added')})
      SELECT (SELECT ${targetJson('full_row')} FROM full_row) AS target, EXISTS (SELECT 1 FROM parent) AS parent_found`);
    const row = rowsOf<{ target: TargetView | null; parent_found: boolean }>(result)[0]!;
    if (row.target) return { target: row.target };
    return input.parentTargetId && !row.parent_found ? 'parent_missing' : 'duplicate';
  }

  async get(projectId: string, targetId: string): Promise<TargetView | null> {
    const result = await this.db.execute(sql`
      SELECT ${targetJson('t')} AS target FROM (${withCounts('targets', this.clock.now())}) t
      WHERE t.project_id = ${projectId} AND t.id = ${targetId}`);
    return rowsOf<{ target: TargetView }>(result)[0]?.target ?? null;
  }

  /** Newest first, ties broken by id so pages are stable. */
  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: TargetView[]; total: number }> {
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        WITH page AS (
          SELECT * FROM targets WHERE project_id = ${projectId}
          ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}
        )
        SELECT ${targetJson('t')} AS target FROM (${withCounts('page', this.clock.now())}) t ORDER BY t.created_at DESC, t.id DESC`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM targets WHERE project_id = ${projectId}`),
    ]);
    return {
      items: rowsOf<{ target: TargetView }>(items).map((r) => r.target),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }

  /** The platform and kind of each of these targets of the project (absent ids are left out). */
  async kinds(projectId: string, ids: readonly string[]): Promise<Map<string, { platform: Platform; kind: TargetKind }>> {
    const result = await this.db.execute(sql`
      SELECT id, platform, kind FROM targets WHERE project_id = ${projectId} AND id = ANY(${sql.param([...ids])}::uuid[])`);
    return new Map(rowsOf<{ id: string; platform: Platform; kind: TargetKind }>(result).map((r) => [r.id, r]));
  }

  /**
   * Applies every change, or none: in one transaction the targets are locked, and if any id is
   * not a target of the project nothing is written and the missing ids come back. Otherwise one
   * UPDATE writes them all with one `target.updated` event each, in the order given.
   *
   * An update is also the owner's "I fixed it" (docs/access-discord.md, "States and errors"): it puts each
   * target back to health `ok` and, in the same statement, its `failed` access rows back to
   * pending, so the workers try them again (woken after commit).
   */
  async updateMany(projectId: string, changes: readonly TargetChange[]): Promise<{ updated: TargetView[] } | { missing: string[] }> {
    const ids = changes.map((c) => c.target_id);
    const input = JSON.stringify(changes.map((c, ord) => ({ ...c, set_on_expiry: 'on_expiry' in c, ord })));
    return this.db.transaction(async (tx) => {
      const locked = await tx.execute(sql`
        SELECT id FROM targets WHERE project_id = ${projectId} AND id = ANY(${sql.param(ids)}::uuid[])
        ORDER BY id FOR UPDATE`);
      const found = new Set(rowsOf<{ id: string }>(locked).map((r) => r.id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length > 0) return { missing };
      const result = await tx.execute(sql`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${input}::jsonb)
            AS i(target_id uuid, is_enabled boolean, target_name text, on_expiry text, set_on_expiry boolean, ord int)
        ), upd AS (
          UPDATE targets t SET is_enabled = coalesce(i.is_enabled, t.is_enabled), name = coalesce(i.target_name, t.name),
                 on_expiry = CASE WHEN i.set_on_expiry THEN i.on_expiry ELSE t.on_expiry END,
                 health = 'ok', health_error = NULL, updated_at = now()
          FROM input i WHERE t.project_id = ${projectId} AND t.id = i.target_id
          RETURNING t.*, i.ord
        ), retry AS (${markWrites(
          sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL,
                failed_generation = NULL, updated_at = now()
              FROM upd WHERE a.target_id = upd.id AND a.state = 'failed'`,
          ['access'],
        )}), full_row AS (${withCounts('upd', this.clock.now())}), ev AS (${targetEvent('target.updated', sql`ORDER BY ord`)})
        SELECT ${targetJson('full_row')} AS target FROM full_row ORDER BY ord`);
      return { updated: rowsOf<{ target: TargetView }>(result).map((r) => r.target) };
    });
  }

  /**
   * Deletes a target with its `target.removed` event, in one transaction. Its plan links go with
   * it (ON DELETE CASCADE), so every plan not deleted that granted it gets a `plan.updated` event
   * showing it without the target. A target that contains others is kept ('has_children').
   */
  async delete(projectId: string, targetId: string): Promise<DeleteOutcome> {
    return this.db.transaction(async (tx) => {
      // Locked first: a child created concurrently either commits before the check below sees
      // it, or waits and then finds its parent gone.
      const locked = await tx.execute(sql`SELECT id FROM targets WHERE project_id = ${projectId} AND id = ${targetId} FOR UPDATE`);
      if (rowsOf(locked).length === 0) return 'missing';
      const children = await tx.execute(sql`SELECT 1 FROM targets WHERE parent_target_id = ${targetId} LIMIT 1`);
      if (rowsOf(children).length > 0) return 'has_children';
      const at = this.clock.now();
      const plans = await tx.execute(sql`
        WITH del AS (SELECT * FROM targets WHERE id = ${targetId}), full_row AS (${withCounts('del', at)}), ev AS (${targetEvent('target.removed')})
        SELECT pt.plan_id FROM plan_targets pt JOIN plans p ON p.id = pt.plan_id
        WHERE pt.target_id = ${targetId} AND p.deleted_at IS NULL`);
      const planIds = rowsOf<{ plan_id: string }>(plans).map((r) => r.plan_id);
      await tx.execute(sql`DELETE FROM targets WHERE id = ${targetId}`);
      if (planIds.length > 0) {
        await tx.execute(
          insertEvent('plan.updated', {
            projectId: sql`project_id`,
            data: { plan: planJson('p', at) },
            from: sql`FROM plans p WHERE p.id = ANY(${sql.param(planIds)}::uuid[]) ORDER BY p.created_at, p.id`,
          }),
        );
      }
      return 'deleted';
    });
  }
}

/**
 * Marks the unhealthy targets `which` selects healthy again and retries their failed access rows
 * (pending, due now, the worker woken after commit): what a drift comparison does once the
 * platform shows that what made a target unhealthy is gone. `which` is a condition on `targets`.
 */
export function healTargets(which: SQL): SQL {
  return sql`
    WITH cleared AS (
      UPDATE targets SET health = 'ok', health_error = NULL, updated_at = now()
      WHERE health = 'unhealthy' AND (${which})
      RETURNING id
    )
    ${markWrites(
      sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL, updated_at = now()
          FROM cleared c WHERE a.target_id = c.id AND a.state = 'failed'`,
      ['access'],
    )}`;
}
