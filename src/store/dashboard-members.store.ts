import { sql, type SQL } from 'drizzle-orm';
import type { MemberFilter, MemberQuery, MemberSort, MemberStatus } from '../domain/dashboard-members/member-query.js';
import type {
  AccessSummary,
  BanRecord,
  KeyedRow,
  MemberAccessRow,
  MemberPageStatements,
  MemberTableStatements,
  PlanChoice,
  Unreachable,
} from '../domain/dashboard-members/member-views.js';
import { rowsOf, type Db } from '../database/db.js';
import { iso } from '../database/sql.js';
import { membershipWhere } from './membership-queries.js';
import { activeAt } from './rule-twins.js';

/**
 * The dashboard's members table and member page (docs/dashboard-members.md): statements over
 * `memberships m` joined to its user `u` (every membership has one: the statements that make a
 * membership record its user), its plan `p` and its ban `b`. A member has at most one membership
 * per project, so a row is a member. Pages are read by key (keyset), each sort an index range.
 */

/**
 * The name a member sorts and is found by: their first name, else their username, lower-cased,
 * compared byte by byte (COLLATE "C") so one index (users_project_name_idx) serves both the order
 * and a prefix search whatever the database's collation.
 */
const NAME_KEY = sql.raw(`(lower(coalesce(u.first_name, u.username, '')) COLLATE "C")`);

/** Each sort: the key column (as SQL and as text for the cursor), the tie-breaker, the direction. */
const ORDERS: Record<MemberSort, { key: SQL; text: SQL; id: SQL; lead: SQL; desc: boolean }> = {
  '-created': { key: sql.raw('m.created_at'), text: sql.raw('m.created_at::text'), id: sql.raw('m.id'), lead: sql.raw('m.project_id'), desc: true },
  created: { key: sql.raw('m.created_at'), text: sql.raw('m.created_at::text'), id: sql.raw('m.id'), lead: sql.raw('m.project_id'), desc: false },
  end_date: { key: sql.raw('m.end_date'), text: sql.raw('m.end_date::text'), id: sql.raw('m.id'), lead: sql.raw('m.project_id'), desc: false },
  '-end_date': { key: sql.raw('m.end_date'), text: sql.raw('m.end_date::text'), id: sql.raw('m.id'), lead: sql.raw('m.project_id'), desc: true },
  name: { key: NAME_KEY, text: NAME_KEY, id: sql.raw('u.user_id'), lead: sql.raw('u.project_id'), desc: false },
  '-name': { key: NAME_KEY, text: NAME_KEY, id: sql.raw('u.user_id'), lead: sql.raw('u.project_id'), desc: true },
};

const isDateSort = (sort: MemberSort) => sort !== 'name' && sort !== '-name';

/** `%`, `_` and `\` match themselves in a search: LIKE's escape is the backslash. */
const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The kinds of active, as the API's list filters define them (src/store/membership-queries.ts). */
const kind = (projectId: string, status: 'in_grace' | 'cancelling' | 'in_trial', now: Date) => sql`(${membershipWhere(projectId, { status }, now)})`;

/** The table's one status of a row: banned first, then expired, then the kinds of active. */
export function memberStatus(projectId: string, now: Date): SQL<MemberStatus> {
  return sql<MemberStatus>`CASE WHEN b.user_id IS NOT NULL THEN 'banned'
    WHEN NOT ${activeAt(sql.raw('m.end_date'), now)} THEN 'expired'
    WHEN ${kind(projectId, 'in_grace', now)} THEN 'in_grace'
    WHEN ${kind(projectId, 'cancelling', now)} THEN 'cancelling'
    WHEN ${kind(projectId, 'in_trial', now)} THEN 'trial'
    ELSE 'active' END`;
}

const SEVEN_DAYS_MS = 7 * 86_400_000;

/**
 * A search's members: a prefix of the displayed name (first name, else username: it covers the
 * first name), of the username or of the id, each an index range of users, OR-ed as a bitmap.
 * Read first and on their own (MATERIALIZED): left to itself the planner walks the table's order
 * and tests each member, which for a search matching a cluster of members far from the first page
 * read the whole project (1.1 s at 1,000,000 members against 40 ms this way).
 */
function searchCte(projectId: string, search: string): SQL {
  const p = likePrefix(search);
  return sql`found AS MATERIALIZED (
    SELECT * FROM users u WHERE u.project_id = ${projectId}
      AND (${NAME_KEY} LIKE ${p} OR (lower(u.username) COLLATE "C") LIKE ${p} OR (u.user_id COLLATE "C") LIKE ${p}))`;
}

/** The member's membership, looked up per found user (LIMIT 1 keeps it a lookup: joined plainly, the planner hashed the whole table). */
const membershipOf = (projectId: string) =>
  sql`CROSS JOIN LATERAL (SELECT * FROM memberships x WHERE x.project_id = ${projectId} AND x.user_id = u.user_id LIMIT 1) m`;

/**
 * The table's relations: memberships, their users and bans; the users are left out of a count
 * that needs none. A search starts from the users it found and looks each one's membership up;
 * the rest walk the memberships in the sort's index order.
 */
function relations(projectId: string, f: MemberFilter, users: boolean): { with: SQL; from: SQL } {
  const bans = sql`LEFT JOIN bans b ON b.project_id = m.project_id AND b.user_id = m.user_id`;
  if (f.search !== undefined) return { with: sql`WITH ${searchCte(projectId, f.search)}`, from: sql`found u ${membershipOf(projectId)} ${bans}` };
  const joinUsers = users ? sql`JOIN users u ON u.project_id = m.project_id AND u.user_id = m.user_id` : sql``;
  return { with: sql``, from: sql`memberships m ${joinUsers} ${bans}` };
}

/** The WHERE of the table over m, u and b (docs/dashboard-members.md, "Filters" and "Saved views"). */
export function memberWhere(projectId: string, f: MemberFilter, now: Date): SQL {
  const active = activeAt(sql.raw('m.end_date'), now);
  const notBanned = sql`b.user_id IS NULL`;
  const parts: SQL[] = [sql`m.project_id = ${projectId}`];
  if (f.planId !== undefined) parts.push(sql`m.plan_id = ${f.planId}`);
  switch (f.status) {
    case undefined:
      break;
    case 'active':
      parts.push(active, notBanned);
      break;
    case 'expired':
      parts.push(sql`NOT ${active}`, notBanned);
      break;
    case 'banned':
      // Read from the bans (a few) rather than tested on each membership (all of them).
      parts.push(sql`m.user_id IN (SELECT x.user_id FROM bans x WHERE x.project_id = ${projectId})`);
      break;
    case 'in_grace':
      parts.push(kind(projectId, 'in_grace', now), notBanned);
      break;
    case 'cancelling':
      parts.push(kind(projectId, 'cancelling', now), notBanned);
      break;
    case 'trial':
      parts.push(kind(projectId, 'in_trial', now), sql`NOT ${kind(projectId, 'cancelling', now)}`, sql`NOT ${kind(projectId, 'in_grace', now)}`, notBanned);
      break;
  }
  switch (f.view) {
    case undefined:
      break;
    case 'expiring_7d':
      parts.push(active, notBanned, sql`m.end_date <= ${new Date(now.getTime() + SEVEN_DAYS_MS).toISOString()}::timestamptz`);
      break;
    case 'payment_failed':
      parts.push(sql`m.subscription_status IN ('past_due', 'unpaid')`, notBanned);
      break;
    // A semi-join on access_attention_idx: the planner reads the flagged rows first when they are
    // few, or walks the order and probes the index when they are many enough to fill a page soon.
    case 'access_failed':
      parts.push(sql`m.user_id IN (SELECT a.user_id FROM access a WHERE a.project_id = ${projectId} AND a.state = 'failed')`);
      break;
    case 'not_linked':
      parts.push(
        active,
        notBanned,
        sql`m.user_id IN (SELECT a.user_id FROM access a WHERE a.project_id = ${projectId} AND a.state = 'waiting_for_member' AND a.desired = 'granted')`,
      );
      break;
  }
  return sql.join(parts, sql` AND `);
}

/**
 * These users as one array parameter: a page's 50, or an export batch's 2,000, which as an IN list
 * of as many parameters took twice as long to bind and plan on PostgreSQL (41 against 19 ms at the
 * median for 2,000 users) and 1.4 times as long on PGlite.
 */
const anyOf = (ids: readonly string[]) => sql`ANY(${sql.param([...ids])}::text[])`;


export class DashboardMembersStore implements MemberTableStatements, MemberPageStatements {
  constructor(private readonly db: Db) {}

  async page(projectId: string, q: Pick<MemberQuery, 'sort' | 'limit' | 'cursor'> & MemberFilter, now: Date): Promise<KeyedRow[]> {
    const o = ORDERS[q.sort];
    // A previous page is read backwards from its cursor, then turned round.
    const backwards = q.cursor?.direction === 'before';
    const desc = o.desc !== backwards;
    const dir = sql.raw(desc ? 'DESC' : 'ASC');
    const where = [memberWhere(projectId, q, now)];
    if (q.cursor) {
      const cmp = sql.raw(desc ? '<' : '>');
      const key = isDateSort(q.sort) ? sql`${q.cursor.key}::timestamptz` : sql`${q.cursor.key}`;
      const id = isDateSort(q.sort) ? sql`${q.cursor.id}::uuid` : sql`${q.cursor.id}`;
      // The project leads, as in the index (project, key, id), so the scan starts at the cursor.
      where.push(sql`(${o.lead}, ${o.key}, ${o.id}) ${cmp} (${projectId}::uuid, ${key}, ${id})`);
    }
    // The page is chosen first; names and plans are looked up for its rows only (the users take
    // part in choosing only to sort by name or to search).
    const r = relations(projectId, q, !isDateSort(q.sort));
    const result = await this.db.execute(sql`${r.with}
      SELECT page.id AS "membershipId", page.user_id AS "userId", n.first_name AS "firstName", n.username,
        page.plan_id AS "planId", p.name AS "planName", page.member_status AS status,
        ${iso(sql.raw('page.end_date'))} AS "endDate", ${iso(sql.raw('page.created_at'))} AS "createdAt",
        page.subscription_status AS "subscriptionStatus", page.k, page.kid
      FROM (
        SELECT m.id, m.project_id, m.user_id, m.plan_id, m.end_date, m.created_at, m.subscription_status,
          ${memberStatus(projectId, now)} AS member_status, ${o.text} AS k, ${o.id}::text AS kid
        FROM ${r.from}
        WHERE ${sql.join(where, sql` AND `)}
        ORDER BY ${o.lead} ${dir}, ${o.key} ${dir}, ${o.id} ${dir}
        LIMIT ${q.limit}) page
      LEFT JOIN LATERAL (SELECT first_name, username FROM users WHERE users.project_id = page.project_id AND users.user_id = page.user_id LIMIT 1) n ON true
      LEFT JOIN plans p ON p.id = page.plan_id
      ORDER BY page.k ${dir}, page.kid ${dir}`);
    const rows = rowsOf<KeyedRow['row'] & { k: string; kid: string }>(result).map(({ k, kid, ...row }) => ({ row, key: k, id: kid }));
    return backwards ? rows.reverse() : rows;
  }

  async count(projectId: string, filter: MemberFilter, now: Date, cap: number): Promise<number> {
    const r = relations(projectId, filter, false);
    const result = await this.db.execute(sql`${r.with}
      SELECT count(*)::int AS n FROM (SELECT 1 FROM ${r.from} WHERE ${memberWhere(projectId, filter, now)} LIMIT ${cap}) x`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  async accessOf(projectId: string, userIds: readonly string[]): Promise<(AccessSummary & { userId: string })[]> {
    if (userIds.length === 0) return [];
    const result = await this.db.execute(sql`
      SELECT a.user_id AS "userId", t.name AS "targetName", a.platform, a.desired, a.state
      FROM access a LEFT JOIN targets t ON t.id = a.target_id
      WHERE a.project_id = ${projectId} AND a.user_id = ${anyOf(userIds)}
        AND (a.desired = 'granted' OR a.state <> 'synced')
      ORDER BY a.user_id, t.name, a.target_id`);
    return rowsOf<AccessSummary & { userId: string }>(result);
  }

  async unreachableOf(projectId: string, userIds: readonly string[]): Promise<(Unreachable & { userId: string })[]> {
    if (userIds.length === 0) return [];
    const result = await this.db.execute(sql`
      SELECT user_id AS "userId", platform, reason FROM unreachable_members
      WHERE project_id = ${projectId} AND user_id = ${anyOf(userIds)}
      ORDER BY user_id, platform`);
    return rowsOf<Unreachable & { userId: string }>(result);
  }

  async plans(projectId: string): Promise<PlanChoice[]> {
    const result = await this.db.execute(sql`
      SELECT id AS "planId", name, deleted_at IS NOT NULL AS deleted FROM plans
      WHERE project_id = ${projectId} ORDER BY deleted_at IS NOT NULL, created_at, id`);
    return rowsOf<PlanChoice>(result);
  }

  async accessRowsOf(projectId: string, userId: string): Promise<MemberAccessRow[]> {
    const result = await this.db.execute(sql`
      SELECT a.target_id AS "targetId", t.name AS "targetName", a.platform, a.kind, a.desired, a.state,
        a.last_error AS "lastError", a.attempts, CASE WHEN a.synced_at IS NULL THEN NULL ELSE ${iso(sql.raw('a.synced_at'))} END AS "syncedAt"
      FROM access a LEFT JOIN targets t ON t.id = a.target_id
      WHERE a.project_id = ${projectId} AND a.user_id = ${userId}
      ORDER BY a.desired, t.name, a.target_id`);
    return rowsOf<MemberAccessRow>(result);
  }

  async banOf(projectId: string, userId: string): Promise<BanRecord | null> {
    const result = await this.db.execute(sql`
      SELECT ${iso(sql.raw('banned_at'))} AS "bannedAt", banned_by AS "bannedBy", reason FROM bans
      WHERE project_id = ${projectId} AND user_id = ${userId}`);
    return rowsOf<BanRecord>(result)[0] ?? null;
  }

  async statusOf(projectId: string, userId: string, now: Date): Promise<MemberStatus | null> {
    const r = relations(projectId, {}, false);
    const result = await this.db.execute(sql`
      SELECT ${memberStatus(projectId, now)} AS status FROM ${r.from} WHERE m.project_id = ${projectId} AND m.user_id = ${userId}`);
    return rowsOf<{ status: MemberStatus }>(result)[0]?.status ?? null;
  }
}
