import { sql } from 'drizzle-orm';
import type { ClaimedJoin, GuildJoinOutcomes, GuildJoinQueue } from '../domain/web/guild-joins.js';
import type { PlatformError } from '../domain/targets/target.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { markWrites } from '../database/wakeups.js';
import { at } from '../database/sql.js';
import { insertEvent } from './outbox.js';
import { GUILD_OF } from './web.store.js';

/**
 * The guild joins after a payment (docs/web.md, "After payment"), and the portal's rejoins
 * (docs/portal.md, "Rejoining the Discord server"; queued by WebStore.saveRejoin with the member's
 * token); schema in schema/web.ts. Each method is one statement; what Discord's answers mean is src/domain/web/guild-joins.ts's.
 */

interface ClaimedRow {
  id: string;
  project_id: string;
  user_id: string;
  attempts: number;
  access_token_sealed: string | null;
  token_expires_at: Date | string | null;
  refresh_token_sealed: string | null;
  application_id: string | null;
  client_secret_sealed: string | null;
  bot_token_sealed: string | null;
  guild_ids: string[] | string;
}

export class GuildJoinsStore implements GuildJoinQueue, GuildJoinOutcomes {
  constructor(private readonly db: Db) {}

  /**
   * Queues the member's join to the guilds of the plan's Discord targets for the payment
   * `paymentKey`, once per payment, and only when tenure holds their Discord token (they logged in
   * with Discord on the web). Runs in the payment's transaction.
   */
  async queueAfterPayment(g: { projectId: string; userId: string; planId: string; paymentKey: string }, now: Date): Promise<boolean> {
    const result = await this.db.execute(sql`
      INSERT INTO guild_joins (project_id, user_id, plan_id, dedupe_key, next_attempt_at, created_at)
      SELECT ${g.projectId}, ${g.userId}, ${g.planId}, ${`payment:${g.paymentKey}`}, ${at(now)}, ${at(now)}
      WHERE EXISTS (SELECT 1 FROM discord_member_tokens k WHERE k.project_id = ${g.projectId} AND k.user_id = ${g.userId})
        AND EXISTS (SELECT 1 FROM plan_targets pt JOIN targets t ON t.id = pt.target_id WHERE pt.plan_id = ${g.planId} AND t.platform = 'discord')
      ON CONFLICT (project_id, dedupe_key) DO NOTHING
      RETURNING id`);
    return rowsOf(result).length > 0;
  }

  /** The member's latest join after buying `planId` (the done page says where it stands). */
  async latestJoin(projectId: string, userId: string, planId: string): Promise<{ state: string; lastError: string | null } | null> {
    const result = await this.db.execute(sql`
      SELECT state, last_error AS "lastError" FROM guild_joins
      WHERE project_id = ${projectId} AND user_id = ${userId} AND plan_id = ${planId}
      ORDER BY created_at DESC, id DESC LIMIT 1`);
    return rowsOf<{ state: string; lastError: string | null }>(result)[0] ?? null;
  }

  /** Claims up to `limit` due joins (`FOR UPDATE SKIP LOCKED`), their next attempt pushed to `leaseUntil`. */
  async claim(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedJoin[]> {
    const result = await this.db.execute(sql`
      WITH locked AS (
        SELECT j.id FROM guild_joins j WHERE j.state = 'pending' AND j.next_attempt_at <= ${at(now)}
        ORDER BY j.next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE guild_joins j SET attempts = j.attempts + 1, next_attempt_at = ${at(leaseUntil)}
        FROM locked WHERE j.id = locked.id
          RETURNING j.id, j.project_id, j.user_id, j.plan_id, j.guild_id, j.attempts
      )
      SELECT c.id, c.project_id, c.user_id, c.attempts, k.access_token_sealed, k.expires_at AS token_expires_at, i.bot_token_sealed,
        k.refresh_token_sealed, i.application_id, i.client_secret_sealed,
        CASE WHEN c.guild_id IS NOT NULL THEN json_build_array(c.guild_id) ELSE
        (SELECT coalesce(json_agg(DISTINCT ${GUILD_OF}) FILTER (WHERE ${GUILD_OF} IS NOT NULL), '[]'::json)
         FROM plan_targets pt JOIN targets t ON t.id = pt.target_id LEFT JOIN targets g ON g.id = t.parent_target_id
         WHERE pt.plan_id = c.plan_id AND t.platform = 'discord' AND t.is_enabled) END AS guild_ids
      FROM claimed c
      LEFT JOIN discord_member_tokens k ON k.project_id = c.project_id AND k.user_id = c.user_id
      LEFT JOIN integrations i ON i.project_id = c.project_id AND i.platform = 'discord'`);
    return rowsOf<ClaimedRow>(result).map((r) => ({
      id: r.id,
      projectId: r.project_id,
      userId: r.user_id,
      attempt: r.attempts,
      accessTokenSealed: r.access_token_sealed,
      tokenExpiresAt: r.token_expires_at === null ? null : new Date(r.token_expires_at),
      botTokenSealed: r.bot_token_sealed,
      refreshTokenSealed: r.refresh_token_sealed,
      applicationId: r.application_id,
      clientSecretSealed: r.client_secret_sealed,
      guildIds: typeof r.guild_ids === 'string' ? (JSON.parse(r.guild_ids) as string[]) : r.guild_ids,
    }));
  }

  /**
   * Done; the member's granted Discord rows that waited for them to join (or were applied while
   * they were not there) are due now, waking the access worker after commit.
   */
  async joined(j: ClaimedJoin, now: Date): Promise<void> {
    const requeued = markWrites(
      sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = ${at(now)}, last_error = NULL, updated_at = ${at(now)}
          WHERE a.project_id = ${j.projectId} AND a.user_id = ${j.userId} AND a.platform = 'discord' AND a.desired = 'granted'
            AND a.state IN ('synced', 'waiting_for_member') AND EXISTS (SELECT 1 FROM done)`,
      ['access'],
    );
    await this.db.execute(sql`
      WITH done AS (UPDATE guild_joins SET state = 'joined', done_at = ${at(now)}, last_error = NULL WHERE id = ${j.id} AND state = 'pending' RETURNING id)
      ${requeued}`);
  }

  async retry(id: string, next: Date, error: string): Promise<void> {
    await this.db.execute(sql`UPDATE guild_joins SET next_attempt_at = ${at(next)}, last_error = ${error} WHERE id = ${id} AND state = 'pending'`);
  }

  /** Failed for good, with `access.failed` (the typed outbox) for each Discord target of the plan (a rejoin: of the member) in `guildId`. */
  async failed(j: ClaimedJoin, guildId: string, error: PlatformError, now: Date): Promise<void> {
    const event = insertEvent('access.failed', {
      projectId: sql`${j.projectId}::uuid`,
      data: {
        user_id: sql<string>`${j.userId}::text`,
        target_id: sql<string>`t.id::text`,
        platform: sql<'discord'>`'discord'`,
        error: sql<PlatformError>`${JSON.stringify(error)}::jsonb`,
      },
      // The plan's targets in the guild; for a rejoin (no plan), the member's granted targets there.
      from: sql`FROM done d JOIN targets t ON t.project_id = ${j.projectId} AND t.platform = 'discord'
                LEFT JOIN targets g ON g.id = t.parent_target_id
                WHERE ${GUILD_OF} = ${guildId}
                  AND CASE WHEN d.plan_id IS NOT NULL THEN EXISTS (SELECT 1 FROM plan_targets pt WHERE pt.plan_id = d.plan_id AND pt.target_id = t.id)
                      ELSE EXISTS (SELECT 1 FROM access a WHERE a.project_id = t.project_id AND a.target_id = t.id AND a.user_id = ${j.userId} AND a.desired = 'granted') END`,
    });
    await this.db.execute(sql`
      WITH done AS (
        UPDATE guild_joins SET state = 'failed', done_at = ${at(now)}, last_error = ${`${error.code}: ${error.message}`}
        WHERE id = ${j.id} AND state = 'pending' RETURNING plan_id
      )
      ${event}`);
  }

  async renewed(j: ClaimedJoin, t: { accessTokenSealed: string; refreshTokenSealed: string | null; expiresAt: Date }): Promise<void> {
    await this.db.execute(sql`
      UPDATE discord_member_tokens SET access_token_sealed = ${t.accessTokenSealed}, refresh_token_sealed = ${t.refreshTokenSealed},
        expires_at = ${at(t.expiresAt)}, updated_at = now()
      WHERE project_id = ${j.projectId} AND user_id = ${j.userId}`);
  }

  async dropped(id: string, reason: string, now: Date): Promise<void> {
    await this.db.execute(sql`UPDATE guild_joins SET state = 'failed', done_at = ${at(now)}, last_error = ${reason} WHERE id = ${id} AND state = 'pending'`);
  }
}
