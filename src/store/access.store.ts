import { sql } from 'drizzle-orm';
import type { AccessState, AccessView } from '../domain/access/access.view.js';
import { affectedOf, rowsOf, type Db } from '../database/db.js';
import { markWrites } from '../database/wakeups.js';
import { iso } from '../database/sql.js';

/**
 * The access rows as the API shows them (`GET /access`), and the writes of `POST /access/resync`
 * besides its re-plan (src/store/access-plan.store.ts).
 */

export interface AccessFilter {
  userId?: string;
  targetId?: string;
  state?: AccessState;
  limit: number;
  offset: number;
}

export class AccessStore {
  constructor(private readonly db: Db) {}

  /** Newest first (creation of the row), ties broken by target and user so pages are stable. */
  async list(projectId: string, filter: AccessFilter): Promise<{ items: AccessView[]; total: number }> {
    const where = sql.join(
      [
        sql`a.project_id = ${projectId}`,
        ...(filter.userId === undefined ? [] : [sql`a.user_id = ${filter.userId}`]),
        ...(filter.targetId === undefined ? [] : [sql`a.target_id = ${filter.targetId}`]),
        ...(filter.state === undefined ? [] : [sql`a.state = ${filter.state}`]),
      ],
      sql` AND `,
    );
    const [page, count] = await Promise.all([
      this.db.execute(sql`
        SELECT a.user_id, a.target_id, a.platform, a.desired, a.state, a.last_error, a.attempts,
               CASE WHEN a.synced_at IS NULL THEN NULL ELSE ${iso(sql`a.synced_at`)} END AS synced_at
        FROM access a WHERE ${where}
        ORDER BY a.created_at DESC, a.target_id DESC, a.user_id DESC
        LIMIT ${filter.limit} OFFSET ${filter.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM access a WHERE ${where}`),
    ]);
    return { items: rowsOf<AccessView>(page), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }

  /**
   * Sets the member's granted rows that are synced or waiting for the member back to pending, due
   * now, so the worker applies them again (waking it after commit). Failed rows are left to their
   * target's fix. Rows of a platform no longer connected are left alone. Returns how many.
   */
  async requeueGranted(projectId: string, userId: string): Promise<number> {
    const result = await this.db.execute(
      markWrites(
        sql`
        UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL, updated_at = now()
        WHERE a.project_id = ${projectId} AND a.user_id = ${userId} AND a.desired = 'granted'
          AND a.state IN ('synced', 'waiting_for_member')
          AND EXISTS (SELECT 1 FROM integrations i WHERE i.project_id = a.project_id AND i.platform = a.platform)`,
        ['access'],
      ),
    );
    return affectedOf(result);
  }

  /** Makes every connected platform of the project due for its drift reconciliation now; returns how many. */
  async reconcileNow(projectId: string): Promise<number> {
    const result = await this.db.execute(
      markWrites(sql`UPDATE integrations SET reconciled_at = NULL, updated_at = now() WHERE project_id = ${projectId}`, ['access']),
    );
    return affectedOf(result);
  }
}
