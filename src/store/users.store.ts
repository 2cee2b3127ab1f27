import { sql, type SQL } from 'drizzle-orm';
import type { BanView, UserView } from '../domain/users/user.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { iso } from '../database/sql.js';

/**
 * The users a project has seen (recorded by membership creation, see MembershipsStore) and its
 * bans. A ban does not need a user row: a user may be banned before they are ever seen.
 */

interface UserRow extends Omit<UserView, 'user_name' | 'unreachable' | 'email'> {
  email: string | null;
  first_name: string | null;
  username: string | null;
  /** JSON text on PGlite and PostgreSQL alike (built with json_agg, read back as a string or an array). */
  unreachable: UserView['unreachable'] | string;
}

const toView = ({ first_name, username, unreachable, email, ...rest }: UserRow): UserView => ({
  ...rest,
  // Only when Checkout collected one (setting collect_email_on_subscribe, docs/payments.md).
  ...(email === null ? {} : { email }),
  user_name: first_name === null && username === null ? null : { first_name, username },
  unreachable: typeof unreachable === 'string' ? (JSON.parse(unreachable) as UserView['unreachable']) : unreachable,
});

/** `term` as a LIKE pattern matching it literally anywhere: `%`, `_` and `\` lose their meaning. */
export const containsPattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The user objects of the users `where` picks (alias `u`): bans and unreachable records joined in. */
const selectUsers = (where: SQL) => sql`
  SELECT u.user_id, ${iso(sql`u.first_seen`)} AS user_first_seen, ${iso(sql`u.last_seen`)} AS user_last_seen,
         u.is_admin, EXISTS (SELECT 1 FROM bans b WHERE b.project_id = u.project_id AND b.user_id = u.user_id) AS is_banned,
         u.first_name, u.username, u.balance::text AS balance, u.currency, u.email,
         (SELECT COALESCE(json_agg(json_build_object('platform', r.platform, 'reason', r.reason, 'since', ${iso(sql`r.since`)})
                                   ORDER BY r.platform), '[]'::json)
          FROM unreachable_members r WHERE r.project_id = u.project_id AND r.user_id = u.user_id) AS unreachable
  FROM users u WHERE ${where}`;

export class UsersStore {
  constructor(private readonly db: Db) {}

  /**
   * Newest first (first seen), ties broken by user id so pages are stable. `search` matches the
   * id, first name or username, case-insensitively, as a literal substring.
   */
  async list(
    projectId: string,
    filter: { search?: string; limit: number; offset: number },
  ): Promise<{ items: UserView[]; total: number }> {
    const pattern = filter.search === undefined ? null : containsPattern(filter.search);
    const where = pattern
      ? sql`u.project_id = ${projectId} AND (u.user_id ILIKE ${pattern} ESCAPE '\\' OR u.first_name ILIKE ${pattern} ESCAPE '\\'
            OR u.username ILIKE ${pattern} ESCAPE '\\')`
      : sql`u.project_id = ${projectId}`;
    const [page, count] = await Promise.all([
      this.db.execute(sql`${selectUsers(where)}
        ORDER BY u.first_seen DESC, u.user_id DESC
        LIMIT ${filter.limit} OFFSET ${filter.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM users u WHERE ${where}`),
    ]);
    return {
      items: rowsOf<UserRow>(page).map(toView),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }

  /** One user of the project, or null when the project has not seen them. */
  async get(projectId: string, userId: string): Promise<UserView | null> {
    const rows = rowsOf<UserRow>(await this.db.execute(selectUsers(sql`u.project_id = ${projectId} AND u.user_id = ${userId}`)));
    return rows[0] ? toView(rows[0]) : null;
  }

  /**
   * Bans a user with its `user.banned` event, in one statement (the access planner reads the event
   * and revokes the member's access: docs/access.md); null when they already are banned (the first
   * ban is kept as it was, and no event is written).
   */
  async ban(projectId: string, userId: string, bannedBy: string, reason: string | null): Promise<BanView | null> {
    const result = await this.db.execute(sql`
      WITH ins AS (
        INSERT INTO bans (project_id, user_id, banned_by, reason) VALUES (${projectId}, ${userId}, ${bannedBy}, ${reason})
        ON CONFLICT (project_id, user_id) DO NOTHING
        RETURNING *
      ), ev AS (${insertEvent('user.banned', {
        projectId: sql`project_id`,
        data: { user_id: sql`user_id`, reason: sql`reason` },
        from: sql`FROM ins`,
      })})
      SELECT user_id, ${iso(sql`banned_at`)} AS banned_at, banned_by, reason AS banned_reason FROM ins`);
    return rowsOf<BanView>(result)[0] ?? null;
  }

  /** Lifts a ban with its `user.unbanned` event, in one statement; false when the user was not banned. */
  async unban(projectId: string, userId: string): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH del AS (
        DELETE FROM bans WHERE project_id = ${projectId} AND user_id = ${userId} RETURNING project_id, user_id
      ), ev AS (${insertEvent('user.unbanned', { projectId: sql`project_id`, data: { user_id: sql`user_id` }, from: sql`FROM del` })})
      SELECT user_id FROM del`);
    return rowsOf(result).length > 0;
  }
}
