import { sql, type SQL } from 'drizzle-orm';
import type { AdminView } from '../domain/admins/admin.view.js';
import { rowsOf, type Db } from '../database/db.js';

/**
 * A project's admins (docs/dashboard.md, "Admins"). Each statement keeps the user's `is_admin`
 * (read by the users API) in step with the admins table, in the same statement, so the two never
 * disagree.
 */

/** The admin object of admins `a` joined to their user `u`, as the API shows it. */
const ADMIN_JSON = sql`jsonb_build_object('user_id', a.user_id,
  'user_name', jsonb_build_object('first_name', u.first_name, 'username', u.username),
  'permissions', to_jsonb(a.permissions))`;

/** A text[] parameter that reads the same on PGlite and PostgreSQL. */
const textArray = (values: readonly string[]): SQL => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))::text[]`;

export class AdminsStore {
  constructor(private readonly db: Db) {}

  /** Newest admin first, as every list (docs/idempotency-and-lists.md), ties broken by user id. */
  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: AdminView[]; total: number }> {
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        SELECT ${ADMIN_JSON} AS admin FROM admins a JOIN users u ON u.project_id = a.project_id AND u.user_id = a.user_id
        WHERE a.project_id = ${projectId} ORDER BY a.created_at DESC, a.user_id DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM admins WHERE project_id = ${projectId}`),
    ]);
    return { items: rowsOf<{ admin: AdminView }>(items).map((r) => r.admin), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }

  async get(projectId: string, userId: string): Promise<AdminView | null> {
    const rows = rowsOf<{ admin: AdminView }>(
      await this.db.execute(sql`
        SELECT ${ADMIN_JSON} AS admin FROM admins a JOIN users u ON u.project_id = a.project_id AND u.user_id = a.user_id
        WHERE a.project_id = ${projectId} AND a.user_id = ${userId}`),
    );
    return rows[0]?.admin ?? null;
  }

  /** The new admin; `no_user` when the project has not seen the user, `duplicate` when they already are an admin. */
  async add(projectId: string, userId: string, permissions: readonly string[]): Promise<AdminView | 'no_user' | 'duplicate'> {
    const rows = rowsOf<{ seen: boolean; admin: AdminView | null }>(
      await this.db.execute(sql`
        WITH u AS (
          UPDATE users SET is_admin = true WHERE project_id = ${projectId} AND user_id = ${userId}
          RETURNING project_id, user_id, first_name, username
        ), a AS (
          INSERT INTO admins (project_id, user_id, permissions)
          SELECT project_id, user_id, ${textArray(permissions)} FROM u
          ON CONFLICT (project_id, user_id) DO NOTHING
          RETURNING user_id, permissions
        )
        SELECT EXISTS (SELECT 1 FROM u) AS seen,
               (SELECT ${ADMIN_JSON} FROM a CROSS JOIN u) AS admin`),
    );
    const row = rows[0]!;
    if (!row.seen) return 'no_user';
    return row.admin ?? 'duplicate';
  }

  /** Replaces the admin's whole set of permissions; null when the user is not an admin. */
  async replace(projectId: string, userId: string, permissions: readonly string[]): Promise<AdminView | null> {
    const rows = rowsOf<{ admin: AdminView }>(
      await this.db.execute(sql`
        WITH a AS (
          UPDATE admins SET permissions = ${textArray(permissions)}, updated_at = now()
          WHERE project_id = ${projectId} AND user_id = ${userId}
          RETURNING project_id, user_id, permissions
        )
        SELECT ${ADMIN_JSON} AS admin FROM a JOIN users u ON u.project_id = a.project_id AND u.user_id = a.user_id`),
    );
    return rows[0]?.admin ?? null;
  }

  /** Removes the admin (the user stays); false when the user was not an admin. */
  async remove(projectId: string, userId: string): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH a AS (
        DELETE FROM admins WHERE project_id = ${projectId} AND user_id = ${userId} RETURNING project_id, user_id
      ), u AS (
        UPDATE users SET is_admin = false FROM a WHERE users.project_id = a.project_id AND users.user_id = a.user_id RETURNING users.user_id
      )
      SELECT user_id FROM a`);
    return rowsOf(result).length > 0;
  }
}
