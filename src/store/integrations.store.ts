import { sql } from 'drizzle-orm';
import type { Platform, PlatformError } from '../domain/targets/target.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { markWrites } from '../database/wakeups.js';
import { at, iso } from '../database/sql.js';

/**
 * A project's bot connections (`integrations`, docs/access.md "Connecting a bot"): one row per
 * (project, platform), the bot token sealed by the secret box. What the API shows is read here
 * without the token; the access worker reads the sealed token with its lease
 * (src/store/access-worker.store.ts).
 */

/** A connection as the API shows it (never the token). */
export interface IntegrationRecord {
  platform: Platform;
  botId: string;
  botName: string;
  /** `YYYY-MM-DDTHH:MM:SS.mmmZ` */
  connectedAt: string;
  health: 'ok' | 'unhealthy';
  lastError: PlatformError | null;
  /** Bumped by every (re)connection. */
  generation: number;
}

export interface IntegrationStatus extends IntegrationRecord {
  /** The project's targets of this platform that the bot cannot act on, oldest first. */
  unhealthyTargets: { targetId: string; targetName: string; healthError: PlatformError | null }[];
  /** Access rows of this platform by state; states without rows are absent. */
  accessByState: Record<string, number>;
  /** Discord: the last failed registration of the commands for members; null once registered (and on Telegram). */
  commandsError: PlatformError | null;
  /** Discord: the application's client secret is held (Login with Discord, docs/web.md). */
  webLogin: boolean;
}

/** The bot's sealed token and the project's target chats of its platform, for a live rights check. */
export interface ChatsToCheck {
  botId: string;
  botTokenSealed: string;
  /** The first `limit` targets of the platform, oldest first; `chatId` is the target's `external_id`. */
  chats: { targetId: string; targetName: string; chatId: string }[];
}

export interface Connection {
  projectId: string;
  platform: Platform;
  botTokenSealed: string;
  botId: string;
  botName: string;
  /** Discord: the bot's application and its public key (interactions are signed with it); null elsewhere. */
  applicationId?: string | null;
  verifyKey?: string | null;
  /** Discord: the application's OAuth2 client secret, sealed; null keeps the one held for the same application. */
  clientSecretSealed?: string | null;
}

const RECORD = (alias: string) => sql.raw(`
  ${alias}.platform, ${alias}.bot_id AS "botId", ${alias}.bot_name AS "botName", ${alias}.health,
  ${alias}.last_error AS "lastError", ${alias}.generation`);

/** Was `err` (a driver error, or Drizzle's around one) a unique violation of `constraint`? */
function violates(err: unknown, constraint: string): boolean {
  for (let e = err as { code?: unknown; constraint?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code === '23505' && e.constraint === constraint) return true;
  }
  return false;
}

export class IntegrationsStore {
  constructor(private readonly db: Db) {}

  /**
   * Connects (or reconnects) a project's bot in one statement: the row is written with a new
   * `generation`, its health reset and its drift repair due at once (another bot may see the
   * guilds differently); the project's targets of the platform are healthy again and
   * their `failed` access rows `pending` (the bot, or its permissions, may have changed: each is
   * tried once more). Null when the bot is connected to another project (a bot's rate-limit
   * budget is owned by one lease, so one bot serves one project).
   */
  async connect(c: Connection, now: Date): Promise<IntegrationRecord | null> {
    const nowAt = at(now);
    const retried = markWrites(
      sql`UPDATE access SET state = 'pending', attempts = 0, next_attempt_at = ${nowAt}, last_error = NULL, failed_generation = NULL, updated_at = ${nowAt}
          WHERE project_id = ${c.projectId} AND platform = ${c.platform} AND state = 'failed' AND EXISTS (SELECT 1 FROM upsert)`,
      ['access'],
    );
    try {
      const result = await this.db.execute(sql`
        WITH held AS (
          -- Waits for every transaction writing an event of the project (the events' trigger
          -- holds the project row FOR KEY SHARE): from here on its events are queued for the access
          -- planner (drizzle/functions.sql, tenure_events_inserted), and those committed before
          -- are read by the re-plan the connection starts.
          SELECT id FROM projects WHERE id = ${c.projectId} FOR UPDATE
        ), upsert AS (
          INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, application_id, verify_key, client_secret_sealed, connected_at, health, last_error, generation, updated_at)
          SELECT ${c.projectId}, ${c.platform}, ${c.botTokenSealed}, ${c.botId}, ${c.botName}, ${c.applicationId ?? null}, ${c.verifyKey ?? null}, ${c.clientSecretSealed ?? null}, ${nowAt}, 'ok', NULL, 1, ${nowAt}
          FROM held
          WHERE NOT EXISTS (
            SELECT 1 FROM integrations WHERE platform = ${c.platform} AND bot_id = ${c.botId} AND project_id <> ${c.projectId}
          )
          ON CONFLICT (project_id, platform) DO UPDATE SET
            bot_token_sealed = excluded.bot_token_sealed, bot_id = excluded.bot_id, bot_name = excluded.bot_name,
            application_id = excluded.application_id, verify_key = excluded.verify_key,
            -- A secret belongs to its application: kept when not given again for the same one, dropped for another.
            client_secret_sealed = coalesce(excluded.client_secret_sealed,
              CASE WHEN integrations.application_id IS NOT DISTINCT FROM excluded.application_id THEN integrations.client_secret_sealed END),
            connected_at = excluded.connected_at, health = 'ok', last_error = NULL, reconciled_at = NULL,
            generation = integrations.generation + 1, updated_at = excluded.updated_at
          RETURNING *
        ), healed AS (
          UPDATE targets SET health = 'ok', health_error = NULL, updated_at = ${nowAt}
          WHERE project_id = ${c.projectId} AND platform = ${c.platform} AND health <> 'ok' AND EXISTS (SELECT 1 FROM upsert)
        ), retried AS (${retried})
        SELECT ${RECORD('u')}, ${iso(sql`u.connected_at`)} AS "connectedAt" FROM upsert u`);
      return rowsOf<IntegrationRecord>(result)[0] ?? null;
    } catch (err) {
      // Two projects connecting one bot at the same instant: the index decides, as the check would have.
      if (violates(err, 'integrations_bot_key')) return null;
      throw err;
    }
  }

  /** The connection with its unhealthy targets and its access rows counted by state; null when not connected. */
  async status(projectId: string, platform: Platform): Promise<IntegrationStatus | null> {
    const result = await this.db.execute(sql`
      SELECT ${RECORD('i')}, ${iso(sql`i.connected_at`)} AS "connectedAt", i.commands_error AS "commandsError",
        i.client_secret_sealed IS NOT NULL AS "webLogin",
        (SELECT coalesce(json_agg(json_build_object('targetId', t.id, 'targetName', t.name, 'healthError', t.health_error) ORDER BY t.created_at, t.id), '[]'::json)
         FROM targets t WHERE t.project_id = i.project_id AND t.platform = i.platform AND t.health <> 'ok') AS "unhealthyTargets",
        (SELECT coalesce(json_object_agg(s.state, s.n), '{}'::json)
         FROM (SELECT a.state, count(*)::int AS n FROM access a WHERE a.project_id = i.project_id AND a.platform = i.platform GROUP BY a.state) s) AS "accessByState"
      FROM integrations i WHERE i.project_id = ${projectId} AND i.platform = ${platform}`);
    return rowsOf<IntegrationStatus>(result)[0] ?? null;
  }

  /**
   * The sealed token with the targets whose chats the status asks about (the integrations
   * service opens it); null when not connected. Only for that check: the token never leaves it.
   */
  async chatsToCheck(projectId: string, platform: Platform, limit: number): Promise<ChatsToCheck | null> {
    const result = await this.db.execute(sql`
      SELECT i.bot_id AS "botId", i.bot_token_sealed AS "botTokenSealed",
        (SELECT coalesce(json_agg(json_build_object('targetId', t.id, 'targetName', t.name, 'chatId', t.external_id) ORDER BY t.created_at, t.id), '[]'::json)
         FROM (SELECT id, name, external_id, created_at FROM targets
               WHERE project_id = i.project_id AND platform = i.platform ORDER BY created_at, id LIMIT ${limit}) t) AS chats
      FROM integrations i WHERE i.project_id = ${projectId} AND i.platform = ${platform}`);
    return rowsOf<ChatsToCheck>(result)[0] ?? null;
  }

  /** Removes the connection and its sealed token; access rows stay. False when there was none. */
  async delete(projectId: string, platform: Platform): Promise<boolean> {
    const result = await this.db.execute(sql`
      DELETE FROM integrations WHERE project_id = ${projectId} AND platform = ${platform} RETURNING 1 AS gone`);
    return rowsOf(result).length > 0;
  }
}
