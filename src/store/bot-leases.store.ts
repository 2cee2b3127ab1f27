import { sql } from 'drizzle-orm';
import type { Platform } from '../domain/targets/target.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { at, iso } from '../database/sql.js';

/**
 * Leases on bots (src/access/README.md): one bot, one budget. A worker process holds a lease on an
 * `integrations` row (`lease_owner`, `lease_expires_at`) and only the holder calls that bot's API;
 * the access worker's writes are fenced by it (src/store/access-worker.store.ts).
 */

export interface IntegrationKey {
  projectId: string;
  platform: Platform;
}

/** A bot this worker holds the lease of. */
export interface LeasedIntegration extends IntegrationKey {
  botId: string;
  botTokenSealed: string;
  /** Bumped by a reconnection: the token (maybe the bot) changed. */
  generation: number;
  leaseExpiresAt: Date;
}

const keysOf = (keys: readonly IntegrationKey[]) => ({
  projects: sql.param(keys.map((k) => k.projectId)),
  platforms: sql.param(keys.map((k) => k.platform)),
});

interface IntegrationRow {
  project_id: string;
  platform: Platform;
  bot_id: string;
  bot_token_sealed: string;
  generation: number;
  lease_expires_at: string;
}

const toLeased = (r: IntegrationRow): LeasedIntegration => ({
  projectId: r.project_id,
  platform: r.platform,
  botId: r.bot_id,
  botTokenSealed: r.bot_token_sealed,
  generation: r.generation,
  leaseExpiresAt: new Date(r.lease_expires_at),
});

export class BotLeasesStore {
  constructor(private readonly db: Db) {}

  /**
   * Leases to `owner` until `until` up to `limit` healthy bots of `platform` that nobody holds (or
   * whose lease ran out at `now`) and that have work: a due pending row, a due message to a member
   * (a confirmation: only the bot's holder sends it, src/store/notifications.store.ts), or, when
   * `reconcileEveryMs` is given, a comparison with the platform that is due; with `all`, every
   * such bot (a Telegram bot's holder receives its updates, so one must always be held). `SKIP LOCKED`: two
   * workers acquiring at once take different bots instead of waiting on each other.
   */
  async acquire(o: {
    owner: string;
    platform: Platform;
    now: Date;
    until: Date;
    limit: number;
    reconcileEveryMs: number | null;
    /** Every healthy bot nobody holds, with work or not. */
    all?: boolean;
    /** Projects this worker will not take now (a token it could not open). */
    skip?: readonly string[];
  }): Promise<LeasedIntegration[]> {
    if (o.limit <= 0) return [];
    const free = sql`(i.lease_owner IS NULL OR i.lease_expires_at IS NULL OR i.lease_expires_at <= ${at(o.now)})`;
    const reconcileDue =
      o.reconcileEveryMs === null
        ? sql`false`
        : sql`(i.reconciled_at IS NULL OR i.reconciled_at <= ${at(o.now)} - make_interval(secs => ${o.reconcileEveryMs / 1000}))`;
    const result = await this.db.execute(sql`
      WITH candidates AS (
        SELECT i.project_id, i.platform FROM integrations i
        WHERE i.platform = ${o.platform} AND i.health = 'ok' AND ${free}
          AND i.project_id <> ALL(${sql.param([...(o.skip ?? [])])}::uuid[])
          AND (${o.all ? sql`true` : sql`false`} OR ${reconcileDue} OR EXISTS (
            SELECT 1 FROM access a
            WHERE a.project_id = i.project_id AND a.state = 'pending' AND a.next_attempt_at <= ${at(o.now)} AND a.platform = i.platform)
            OR EXISTS (
            SELECT 1 FROM notifications n
            WHERE n.project_id = i.project_id AND n.platform = i.platform AND n.state = 'pending' AND n.next_attempt_at <= ${at(o.now)}))
        ORDER BY i.lease_expires_at NULLS FIRST, i.project_id
        LIMIT ${o.limit}
        FOR UPDATE OF i SKIP LOCKED
      )
      UPDATE integrations i SET lease_owner = ${o.owner}, lease_expires_at = ${at(o.until)}
      FROM candidates c
      WHERE i.project_id = c.project_id AND i.platform = c.platform AND i.health = 'ok' AND ${free}
      RETURNING i.project_id, i.platform, i.bot_id, i.bot_token_sealed, i.generation, ${iso(sql`i.lease_expires_at`)} AS lease_expires_at`);
    return rowsOf<IntegrationRow>(result).map(toLeased);
  }

  /**
   * Extends the leases `owner` still holds at `now` to `until`; returns those (with their current
   * token and generation: a reconnection changes them). A bot missing from the answer is lost:
   * taken over, disconnected, or flagged unhealthy.
   */
  async renew(owner: string, keys: readonly IntegrationKey[], now: Date, until: Date): Promise<LeasedIntegration[]> {
    if (keys.length === 0) return [];
    const k = keysOf(keys);
    const result = await this.db.execute(sql`
      UPDATE integrations i SET lease_expires_at = ${at(until)}
      FROM unnest(${k.projects}::uuid[], ${k.platforms}::text[]) AS k(project_id, platform)
      WHERE i.project_id = k.project_id AND i.platform = k.platform
        AND i.lease_owner = ${owner} AND i.lease_expires_at > ${at(now)} AND i.health = 'ok'
      RETURNING i.project_id, i.platform, i.bot_id, i.bot_token_sealed, i.generation, ${iso(sql`i.lease_expires_at`)} AS lease_expires_at`);
    return rowsOf<IntegrationRow>(result).map(toLeased);
  }

  /**
   * Gives back leases `owner` holds, and makes the rows it claimed but did not finish (`abandoned`)
   * due at `now`, so the next holder calls them at once rather than after their claim lease.
   */
  async release(
    owner: string,
    keys: readonly IntegrationKey[],
    now: Date,
    abandoned: readonly { projectId: string; targetId: string; userId: string }[] = [],
  ): Promise<number> {
    if (keys.length === 0) return 0;
    const k = keysOf(keys);
    const result = await this.db.execute(sql`
      WITH released AS (
        UPDATE integrations i SET lease_owner = NULL, lease_expires_at = NULL
        FROM unnest(${k.projects}::uuid[], ${k.platforms}::text[]) AS k(project_id, platform)
        WHERE i.project_id = k.project_id AND i.platform = k.platform AND i.lease_owner = ${owner}
        RETURNING i.project_id, i.platform
      ), given_back AS (
        UPDATE access a SET next_attempt_at = ${at(now)}
        FROM unnest(${sql.param(abandoned.map((r) => r.projectId))}::uuid[], ${sql.param(abandoned.map((r) => r.targetId))}::uuid[],
                    ${sql.param(abandoned.map((r) => r.userId))}::text[]) AS r(project_id, target_id, user_id)
        WHERE a.target_id = r.target_id AND a.user_id = r.user_id AND a.project_id = r.project_id AND a.state = 'pending'
          AND EXISTS (SELECT 1 FROM released x WHERE x.project_id = a.project_id AND x.platform = a.platform)
        RETURNING 1
      )
      SELECT (SELECT count(*)::int FROM released) AS n`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}
