import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { healTargets } from './targets.store.js';
import { markWrites } from '../database/wakeups.js';
import { at } from '../database/sql.js';

/**
 * Drift repair's SQL (src/access/reconciler.ts, docs/access-discord.md "Drift repair"): which bots are due
 * for a comparison with Discord, which guilds a project's targets name, and the repairs a page of a
 * guild's member list calls for, set-based (one statement per page of up to 1,000 members, their
 * ids and roles passed as one JSON parameter, never a query per member).
 *
 * Only rows at rest are compared: `synced` and `waiting_for_member`. A `pending` row is the
 * worker's (its call is coming), a `failed` one waits for its target or connection to change. A
 * row written after the member list was read (`updated_at` later than `seenAt`, the database's
 * clock taken before the request) is left alone too: the worker may have just applied it, and the
 * list would be older than what it says. A repair makes the row `pending` with what the list
 * showed as `applied`, so the worker makes exactly the one call that differs.
 */

/** One guild member as the list shows them: their user id and their role ids. */
export interface ListedMember {
  id: string;
  roles: string[];
}

export interface DueIntegration {
  projectId: string;
  botId: string;
}

/** What one page's statement repaired, by kind of drift. */
export interface PageRepairs {
  /** An active member lost a role tenure gave (removed by hand): given again. */
  regrant: number;
  /** A member tenure waited for is in the guild: the role is given (or they already hold it: synced). */
  rejoined: number;
  /** A member whose access ended still holds the role, or is still in a `kick` guild: revoked again. */
  revoke: number;
}

/** As every `health_error`: the platform's code as a string (the API's schema), and its message. */
export interface GuildError {
  code: string;
  message: string;
}

/** The rows of `guild` in a project: role targets there, and the guild target itself. */
const inGuild = (alias: string, guildId: string) =>
  sql`(${sql.raw(alias)}.guild_id = ${guildId} OR (${sql.raw(alias)}.kind = 'guild' AND ${sql.raw(alias)}.external_id = ${guildId}))`;

/**
 * The UPDATE of a page's repairs (over `found`, whose `repair` column names each row's), on Discord
 * and Telegram alike, marked as a write of access rows: once it commits, the access workers are
 * woken (src/database/wakeups.ts) and claim the rows made pending. The `revoke` repair (the member
 * holds what they should not) marks the row applied so the worker takes it away; the `synced`
 * one (the member is found holding what they waited for) is synced at `syncedAt`; every other
 * repair marks the row unapplied so the worker grants it again. A row changed since `seenAt` (a
 * worker's completion, or an update handled in between) is left: re-read on the locked row.
 */
export const repairUpdate = (r: { revoke: string; synced: string; syncedAt: SQL; seenAt: SQL }) =>
  markWrites(
    sql`
        UPDATE access a SET
          applied = CASE f.repair WHEN ${r.revoke} THEN 'granted' WHEN ${r.synced} THEN 'granted' ELSE 'revoked' END,
          state = CASE f.repair WHEN ${r.synced} THEN 'synced' ELSE 'pending' END,
          attempts = 0,
          next_attempt_at = now(),
          last_error = NULL,
          synced_at = CASE f.repair WHEN ${r.synced} THEN ${r.syncedAt} ELSE a.synced_at END,
          updated_at = now()
        FROM found f
        WHERE f.repair IS NOT NULL AND a.target_id = f.target_id AND a.user_id = f.user_id
          AND a.state IN ('synced', 'waiting_for_member') AND a.updated_at <= ${r.seenAt}
        RETURNING a.target_id, a.user_id, a.platform, f.repair`,
    ['access'],
  );

/**
 * The error code reconciliation sets on a guild target when the member list is refused; a listing
 * that succeeds later clears exactly these (docs/access-discord.md, "Drift repair").
 */
export const LISTING_ERROR_CODES = ['50001', '10004', '403'] as const;

export class AccessReconcileStore {
  constructor(private readonly db: Db) {}

  /**
   * Discord bots leased to `owner` (the worker's lease, still running at `now`) whose last
   * comparison is older than `everyMs`, or that were never compared; healthy ones only (a bot
   * whose token stopped working waits for a reconnection).
   */
  async due(owner: string, now: Date, everyMs: number): Promise<DueIntegration[]> {
    const nowAt = at(now);
    const result = await this.db.execute(sql`
      SELECT project_id AS "projectId", bot_id AS "botId" FROM integrations
      WHERE platform = 'discord' AND lease_owner = ${owner} AND lease_expires_at > ${nowAt} AND health = 'ok'
        AND (reconciled_at IS NULL OR reconciled_at <= ${nowAt} - make_interval(secs => ${everyMs / 1000}))
      ORDER BY reconciled_at NULLS FIRST`);
    return rowsOf<DueIntegration>(result);
  }

  /**
   * The guilds the project's Discord targets name (guild targets, and role targets' guilds through
   * their parent). A deleted target's rows are not compared: it is not tenure's any more.
   */
  async guilds(projectId: string): Promise<string[]> {
    const result = await this.db.execute(sql`
      SELECT external_id AS guild FROM targets WHERE project_id = ${projectId} AND platform = 'discord' AND kind = 'guild'
      UNION
      SELECT p.external_id FROM targets r JOIN targets p ON p.id = r.parent_target_id
      WHERE r.project_id = ${projectId} AND r.platform = 'discord' AND r.kind = 'role'
      ORDER BY 1`);
    return rowsOf<{ guild: string }>(result).map((r) => r.guild);
  }

  /** The database's clock: rows written after this instant are newer than a list read after it. */
  async now(): Promise<Date> {
    const result = await this.db.execute(sql`SELECT now() AS now`);
    return new Date(rowsOf<{ now: Date | string }>(result)[0]!.now);
  }

  /**
   * Compares one page of the guild's member list with the rows of those members, and repairs:
   * - desired granted, synced, role missing → applied revoked, pending (the role comes back);
   * - waiting_for_member, now present → pending (applied revoked) for a role they lack; synced
   *   (applied granted) for a role they hold, or for the guild itself (being there is the grant);
   * - desired revoked, still holding a `remove_role` role, or still in a `kick` guild → applied
   *   granted, pending (the revoke is made again).
   * Members of the page without rows (people tenure does not manage) are not read, nor are rows of
   * a deleted target.
   *
   * `seenAt` null: the members as a gateway event showed them (src/access/discord/gateway.ts), compared
   * with the rows at rest when the statement runs (a row written by a transaction that started
   * later is newer than the event).
   */
  async repairPage(projectId: string, guildId: string, members: readonly ListedMember[], seenAt: Date | null): Promise<PageRepairs> {
    if (members.length === 0) return { regrant: 0, rejoined: 0, revoke: 0 };
    const page = JSON.stringify(members);
    const seen = seenAt ? at(seenAt) : sql`now()`;
    const result = await this.db.execute(sql`
      WITH page AS (
        SELECT m.id AS user_id, m.roles FROM jsonb_to_recordset(${page}::jsonb) AS m(id text, roles text[])
      ), found AS (
        SELECT a.target_id, a.user_id,
          CASE
            WHEN a.desired = 'granted' AND a.kind = 'role' AND NOT (a.external_id = ANY (p.roles))
              THEN CASE a.state WHEN 'synced' THEN 'regrant' ELSE 'rejoined' END
            WHEN a.desired = 'granted' AND a.state = 'waiting_for_member' THEN 'rejoined_synced'
            WHEN a.desired = 'revoked' AND a.kind = 'role' AND a.on_expiry = 'remove_role' AND a.external_id = ANY (p.roles) THEN 'revoke'
            WHEN a.desired = 'revoked' AND a.kind = 'guild' AND a.on_expiry = 'kick' THEN 'revoke'
          END AS repair
        FROM page p
        JOIN access a ON a.project_id = ${projectId} AND a.user_id = p.user_id
        -- A deleted target is not tenure's any more: its rows only wait for their last revoke.
        JOIN targets t ON t.id = a.target_id
        WHERE a.platform = 'discord' AND ${inGuild('a', guildId)}
          AND a.state IN ('synced', 'waiting_for_member') AND a.updated_at <= ${seen}
      ), repaired AS (${repairUpdate({ revoke: 'revoke', synced: 'rejoined_synced', syncedAt: sql`now()`, seenAt: seen })})
      SELECT count(*) FILTER (WHERE repair = 'regrant')::int AS regrant,
             count(*) FILTER (WHERE repair IN ('rejoined', 'rejoined_synced'))::int AS rejoined,
             count(*) FILTER (WHERE repair = 'revoke')::int AS revoke
      FROM repaired`);
    return rowsOf<PageRepairs>(result)[0]!;
  }

  /**
   * After the whole list: rows that should be granted, synced, of members not in the guild any more
   * → `waiting_for_member` (applied unknown), granted again when they come back. `present` is every
   * user id the list showed (a hashed anti-join: one pass over the project's rows of the guild).
   */
  async markAbsent(projectId: string, guildId: string, present: readonly string[], seenAt: Date): Promise<number> {
    const result = await this.db.execute(sql`
      WITH gone AS (
        UPDATE access a SET state = 'waiting_for_member', applied = NULL, updated_at = now()
        WHERE a.project_id = ${projectId} AND a.platform = 'discord' AND ${inGuild('a', guildId)}
          AND a.desired = 'granted' AND a.state = 'synced' AND a.updated_at <= ${at(seenAt)}
          AND EXISTS (SELECT 1 FROM targets t WHERE t.id = a.target_id)
          AND a.user_id NOT IN (SELECT unnest(${sql.param([...present])}::text[]))
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]!.n;
  }

  /**
   * The member list of `guild` was refused (403 Missing Access: the bot is not in the guild, or
   * lacks the Server Members intent; 10004 Unknown Guild): the guild target is flagged unhealthy
   * with the error, shown in its GET. Access rows are left as they are: giving and taking roles
   * may still work, only the comparison cannot be made.
   */
  async markGuildUnhealthy(projectId: string, guildId: string, error: GuildError): Promise<void> {
    const healthError = JSON.stringify({ code: error.code, message: error.message });
    await this.db.execute(sql`
      UPDATE targets SET health = 'unhealthy', health_error = ${healthError}::jsonb, updated_at = now()
      WHERE project_id = ${projectId} AND platform = 'discord' AND kind = 'guild' AND external_id = ${guildId}
        AND health_error IS DISTINCT FROM ${healthError}::jsonb`);
  }

  /**
   * The list was read: a guild target flagged by a refused listing (one of LISTING_ERROR_CODES)
   * is healthy again, and its rows that failed meanwhile are retried, as after a target update.
   */
  async clearGuildListingError(projectId: string, guildId: string): Promise<void> {
    await this.db.execute(
      healTargets(sql`project_id = ${projectId} AND platform = 'discord' AND kind = 'guild' AND external_id = ${guildId}
        AND health_error->>'code' = ANY (${sql.param([...LISTING_ERROR_CODES])}::text[])`),
    );
  }

  /** The comparison of this project's bot ended at `endedAt` (the app's clock, as `due` reads it). */
  async markReconciled(projectId: string, endedAt: Date): Promise<void> {
    await this.db.execute(sql`
      UPDATE integrations SET reconciled_at = ${at(endedAt)}
      WHERE project_id = ${projectId} AND platform = 'discord'`);
  }
}
