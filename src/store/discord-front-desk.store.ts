import { sql } from 'drizzle-orm';
import type { DiscordApplication, FrontDeskStatements } from '../domain/front-desk/discord-interactions.js';
import type { MemberMembership, PlanOffer } from '../domain/front-desk/discord-messages.js';
import type { PlatformError } from '../domain/targets/target.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';
import { statusAt } from './rule-twins.js';

/**
 * What Discord's commands for members read and write (docs/front-desk.md, "Discord: commands for
 * members"): the bot's application, the interaction ids taken, the plans offered in a guild, a
 * member's memberships, the guilds the commands are registered in and how that went.
 */

/** How long an interaction id is kept: longer than a signed timestamp is accepted (5 minutes). */
const SEEN_KEPT = '10 minutes';

/** The guild of a Discord target: its own id for a guild, its parent guild's for a role or channel. */
const GUILD_OF = sql.raw(`CASE WHEN t.kind = 'guild' THEN t.external_id ELSE g.external_id END`);

/** The bot and the guilds its commands go to. */
export interface CommandGuilds {
  botTokenSealed: string;
  applicationId: string | null;
  guildIds: string[];
}

export class DiscordFrontDeskStore implements FrontDeskStatements {
  constructor(private readonly db: Db) {}

  async application(projectId: string): Promise<DiscordApplication | null> {
    const result = await this.db.execute(sql`
      SELECT application_id AS "applicationId", verify_key AS "verifyKey" FROM integrations
      WHERE project_id = ${projectId} AND platform = 'discord' AND application_id IS NOT NULL AND verify_key IS NOT NULL`);
    return rowsOf<DiscordApplication>(result)[0] ?? null;
  }

  /** Takes the id once; ids older than SEEN_KEPT go in the same statement. */
  async firstSeen(interactionId: string, now: Date): Promise<boolean> {
    const nowAt = at(now);
    const result = await this.db.execute(sql`
      WITH gone AS (
        DELETE FROM discord_interactions WHERE seen_at < ${nowAt} - ${SEEN_KEPT}::interval
      ), taken AS (
        INSERT INTO discord_interactions (id, seen_at) VALUES (${interactionId}, ${nowAt}) ON CONFLICT (id) DO NOTHING RETURNING 1
      )
      SELECT count(*)::int AS n FROM taken`);
    return rowsOf<{ n: number }>(result)[0]!.n === 1;
  }

  async plansInGuild(projectId: string, guildId: string): Promise<PlanOffer[]> {
    const result = await this.db.execute(sql`
      SELECT p.id AS "planId", p.name, p.price_formatted AS "priceFormatted", p.duration, p.recurring,
        json_agg(t.name ORDER BY pt.created_at, t.id) AS grants
      FROM plans p
      JOIN plan_targets pt ON pt.plan_id = p.id
      JOIN targets t ON t.id = pt.target_id
      LEFT JOIN targets g ON g.id = t.parent_target_id
      WHERE p.project_id = ${projectId} AND p.deleted_at IS NULL
        AND t.platform = 'discord' AND t.is_enabled AND ${GUILD_OF} = ${guildId}
      GROUP BY p.id
      ORDER BY min(p.created_at), p.id
      LIMIT 25`);
    return rowsOf<PlanOffer>(result);
  }

  async membershipsOf(projectId: string, userId: string, now: Date): Promise<MemberMembership[]> {
    const result = await this.db.execute(sql`
      SELECT p.name AS "planName", ${statusAt(sql`m.end_date`, now)} AS status, m.end_date AS "endDate",
        m.subscription_status AS "subscriptionStatus"
      FROM memberships m LEFT JOIN plans p ON p.id = m.plan_id
      WHERE m.project_id = ${projectId} AND m.user_id = ${userId}
      ORDER BY m.created_at DESC`);
    return rowsOf<MemberMembership & { endDate: Date | string }>(result).map((r) => ({ ...r, endDate: new Date(r.endDate) }));
  }

  /** The connected bot and the distinct guilds of the project's Discord targets; null when no bot is connected. */
  async commandGuilds(projectId: string): Promise<CommandGuilds | null> {
    const result = await this.db.execute(sql`
      SELECT i.bot_token_sealed AS "botTokenSealed", i.application_id AS "applicationId",
        (SELECT coalesce(json_agg(DISTINCT ${GUILD_OF}) FILTER (WHERE ${GUILD_OF} IS NOT NULL), '[]'::json)
         FROM targets t LEFT JOIN targets g ON g.id = t.parent_target_id
         WHERE t.project_id = i.project_id AND t.platform = 'discord') AS "guildIds"
      FROM integrations i WHERE i.project_id = ${projectId} AND i.platform = 'discord'`);
    return rowsOf<CommandGuilds>(result)[0] ?? null;
  }

  /** How the last registration went: null once every guild took the commands. */
  async recordCommands(projectId: string, error: PlatformError | null): Promise<void> {
    await this.db.execute(sql`
      UPDATE integrations SET commands_error = ${error === null ? null : JSON.stringify(error)}::jsonb
      WHERE project_id = ${projectId} AND platform = 'discord'`);
  }
}
