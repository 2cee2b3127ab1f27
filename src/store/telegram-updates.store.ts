import { sql, type SQL } from 'drizzle-orm';
import { outcomeData } from './access-completions.js';
import type { AccessError, Desired } from './access-worker.store.js';
import { rowsOf, type Db } from '../database/db.js';
import { eventRows, insertEvents } from './outbox.js';
import { markWrites } from '../database/wakeups.js';
import { at } from '../database/sql.js';

/**
 * A Telegram bot's updates (`telegram_updates`; docs/access-telegram.md: joins, leaves, join
 * requests), at least once and only once. Long polling and the webhook route only insert them
 * (a repeat is a no-op: the primary key is the bot's `update_id`); the worker holding the bot's
 * lease reads the unhandled ones in `update_id` order and writes each one's effects in the same
 * transaction that marks it handled (src/domain/access/telegram-update-effects.ts), so a crash
 * leaves an update either unhandled, to be handled again, or handled with all its effects.
 *
 * Every write made for the holder (a polled batch with the next offset, an update handled) is
 * fenced by its lease (src/store/bot-leases.store.ts): nothing is written once `lease_owner` is
 * another process's or the lease ran out at `now` (the app clock), and the integration's bot must
 * still be the one the update came to.
 */

/** The bot an update came to. */
export interface TelegramBotKey {
  projectId: string;
  /** The bot's own user id (`integrations.bot_id`). */
  botId: string;
}

/** An update as Telegram sent it: its `update_id` and the whole Update object. */
export interface ReceivedUpdate {
  updateId: number;
  payload: unknown;
}

/** Where one member's access row stands. */
export interface AccessAt {
  desired: Desired;
  state: string;
  applied: Desired | null;
}

/** What the handling of an update about one user in one chat decides from (one read). */
export interface UpdateContext {
  /** The project's target of that chat; null when the chat is none of tenure's. */
  target: { id: string; healthy: boolean } | null;
  /** The user's access row on that target. */
  user: AccessAt | null;
  /** The user is banned from the project. */
  userBanned: boolean;
  /** The tenure link the user came through (by its exact URL), whoever it was made for. */
  invite: { targetId: string; userId: string; chatId: string } | null;
  /** The access row of the member the link was made for, on the link's target. */
  inviteOwner: AccessAt | null;
}

/** NUL and lone surrogates: jsonb refuses the one and cannot hold the other. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for.
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/gu;

/**
 * An update as jsonb can hold it. A polled batch holding a name with a NUL would otherwise fail
 * to insert on every try and stop the bot's updates for good; the fields tenure reads (ids,
 * statuses, links) never hold one.
 */
export const storable = (payload: unknown): string => JSON.stringify(payload, (_key, value: unknown) => (typeof value === 'string' ? value.replace(UNSTORABLE, '\uFFFD') : value));

export class TelegramUpdatesStore {
  constructor(private readonly db: Db) {}

  /**
   * Stores a batch `getUpdates` returned and the offset that confirms it (`update_offset`, the
   * next `getUpdates` offset), in one statement, while `owner` holds the bot. Updates stored
   * already are left as they are.
   */
  async receivePolled(o: { owner: string; bot: TelegramBotKey; now: Date; updates: readonly ReceivedUpdate[]; nextOffset: number }): Promise<{ held: boolean; stored: number }> {
    const input = `[${o.updates.map((u) => `{"update_id":${u.updateId},"payload":${storable(u.payload)}}`).join(',')}]`;
    const result = await this.db.execute(sql`
      WITH lease AS (${lease(o.owner, o.bot, o.now)}), moved AS (
        UPDATE integrations SET update_offset = ${o.nextOffset}::bigint
        WHERE project_id = ${o.bot.projectId} AND platform = 'telegram' AND EXISTS (SELECT 1 FROM lease)
        RETURNING 1
      ), stored AS (
        INSERT INTO telegram_updates (project_id, bot_id, update_id, payload, received_at)
        SELECT ${o.bot.projectId}, ${o.bot.botId}, u.update_id, u.payload, ${at(o.now)}
        FROM jsonb_to_recordset(${input}::jsonb) AS u(update_id bigint, payload jsonb)
        WHERE EXISTS (SELECT 1 FROM lease)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM lease)::int AS held, (SELECT count(*) FROM stored)::int AS stored`);
    const row = rowsOf<{ held: number; stored: number }>(result)[0]!;
    return { held: row.held > 0, stored: row.stored };
  }

  /**
   * The `getUpdates` offset to resume from: the one stored with the last polled batch of this bot,
   * or null (Telegram then starts at its oldest unconfirmed update). An offset is trusted only
   * while the update just below it is this bot's: after a reconnection to another bot, whose
   * update ids are another sequence, an old offset would confirm (drop) the new bot's updates.
   */
  async offset(bot: TelegramBotKey): Promise<number | null> {
    const result = await this.db.execute(sql`
      SELECT i.update_offset FROM integrations i
      WHERE i.project_id = ${bot.projectId} AND i.platform = 'telegram' AND i.bot_id = ${bot.botId}
        AND EXISTS (SELECT 1 FROM telegram_updates u
                    WHERE u.project_id = i.project_id AND u.bot_id = i.bot_id AND u.update_id = i.update_offset - 1)`);
    const value = rowsOf<{ update_offset: string | number | null }>(result)[0]?.update_offset;
    return value === undefined || value === null ? null : Number(value);
  }

  /** The bot's first `limit` unhandled updates in `update_id` order, while `owner` holds it (none otherwise). */
  async unhandled(owner: string, bot: TelegramBotKey, now: Date, limit: number): Promise<ReceivedUpdate[]> {
    const result = await this.db.execute(sql`
      SELECT u.update_id, u.payload FROM telegram_updates u
      WHERE u.project_id = ${bot.projectId} AND u.handled_at IS NULL AND u.bot_id = ${bot.botId}
        AND EXISTS (${lease(owner, bot, now)})
      ORDER BY u.update_id
      LIMIT ${limit}`);
    return rowsOf<{ update_id: string | number; payload: unknown }>(result).map((r) => ({ updateId: Number(r.update_id), payload: r.payload }));
  }

  /** Of these projects, those with unhandled updates (a webhook holder's wake-up: which bots to look at). */
  async withUnhandled(projectIds: readonly string[]): Promise<Set<string>> {
    if (projectIds.length === 0) return new Set();
    const result = await this.db.execute(sql`
      SELECT p.id AS project_id FROM unnest(${sql.param([...projectIds])}::uuid[]) AS p(id)
      WHERE EXISTS (SELECT 1 FROM telegram_updates u WHERE u.project_id = p.id AND u.handled_at IS NULL)`);
    return new Set(rowsOf<{ project_id: string }>(result).map((r) => r.project_id));
  }

  /** What handling an update about `userId` (none: the bot's own) in `chatId` (through `inviteLink`, if any) decides from. */
  async context(projectId: string, chatId: string, userId: string | null, inviteLink: string | null): Promise<UpdateContext> {
    const accessAt = (alias: string) => sql.raw(`jsonb_build_object('desired', ${alias}.desired, 'state', ${alias}.state, 'applied', ${alias}.applied)`);
    const result = await this.db.execute(sql`
      WITH t AS (
        SELECT id, health FROM targets WHERE project_id = ${projectId} AND platform = 'telegram' AND external_id = ${chatId}
      ), inv AS (
        SELECT target_id, user_id, chat_id FROM telegram_invites WHERE invite_link = ${inviteLink} AND project_id = ${projectId}
      )
      SELECT (SELECT jsonb_build_object('id', t.id, 'healthy', t.health = 'ok') FROM t) AS target,
             (SELECT ${accessAt('a')} FROM access a JOIN t ON a.target_id = t.id WHERE a.user_id = ${userId}) AS "user",
             EXISTS (SELECT 1 FROM bans b WHERE b.project_id = ${projectId} AND b.user_id = ${userId}) AS user_banned,
             (SELECT jsonb_build_object('targetId', i.target_id, 'userId', i.user_id, 'chatId', i.chat_id) FROM inv i) AS invite,
             (SELECT ${accessAt('a')} FROM access a JOIN inv i ON a.target_id = i.target_id AND a.user_id = i.user_id) AS invite_owner`);
    const row = rowsOf<{
      target: UpdateContext['target'];
      user: AccessAt | null;
      user_banned: boolean;
      invite: UpdateContext['invite'];
      invite_owner: AccessAt | null;
    }>(result)[0]!;
    return { target: row.target, user: row.user, userBanned: row.user_banned, invite: row.invite, inviteOwner: row.invite_owner };
  }

  /**
   * Marks update `updateId` handled while `owner` holds the bot at `now`: `generation` is the
   * lease's (null: not held, nothing written), `handled` false when it was handled already. Its
   * effects are written after it in the same transaction (src/domain/access/telegram-update-effects.ts).
   */
  async markHandled(owner: string, bot: TelegramBotKey, now: Date, updateId: number): Promise<{ generation: number | null; handled: boolean }> {
    const result = await this.db.execute(sql`
      WITH lease AS (${lease(owner, bot, now)}), marked AS (
        UPDATE telegram_updates SET handled_at = ${at(now)}
        WHERE project_id = ${bot.projectId} AND bot_id = ${bot.botId} AND update_id = ${updateId}::bigint AND handled_at IS NULL
          AND EXISTS (SELECT 1 FROM lease)
        RETURNING update_id)
      SELECT (SELECT generation FROM lease) AS generation, (SELECT count(*) FROM marked)::int AS handled`);
    const row = rowsOf<{ generation: number | string | null; handled: number }>(result)[0]!;
    return { generation: row.generation === null ? null : Number(row.generation), handled: row.handled > 0 };
  }

  /**
   * The user is in the chat. A granted row is synced (true: with `access.granted`), unless it was
   * synced already; a revoked one records them in and, when it was at rest, is due at once for the
   * worker to remove them (a failed one stays failed).
   */
  async memberJoined(projectId: string, now: Date, joined: { targetId: string; userId: string }): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH joined AS (${markWrites(
        sql`UPDATE access a SET
              state = CASE WHEN a.desired = 'granted' THEN 'synced' WHEN a.state = 'failed' THEN 'failed' ELSE 'pending' END,
              applied = 'granted',
              last_error = CASE WHEN a.desired = 'granted' THEN NULL ELSE a.last_error END,
              failed_generation = CASE WHEN a.desired = 'granted' THEN NULL ELSE a.failed_generation END,
              synced_at = CASE WHEN a.desired = 'granted' THEN ${at(now)} ELSE a.synced_at END,
              attempts = CASE WHEN a.desired = 'revoked' AND a.state IN ('synced', 'waiting_for_member') THEN 0 ELSE a.attempts END,
              next_attempt_at = CASE WHEN a.desired = 'revoked' AND a.state IN ('synced', 'waiting_for_member') THEN ${at(now)} ELSE a.next_attempt_at END,
              updated_at = now()
            WHERE a.target_id = ${joined.targetId} AND a.user_id = ${joined.userId} AND a.project_id = ${projectId}
              AND NOT (a.desired = 'granted' AND a.state = 'synced' AND a.applied = 'granted')
              AND NOT (a.desired = 'revoked' AND a.applied = 'granted' AND a.state IN ('pending', 'failed'))
            RETURNING a.target_id, a.user_id, a.platform, a.desired`,
        ['access'],
      )}), announced AS (
        ${insertEvents([
          eventRows('access.granted', { projectId: sql`${projectId}::uuid`, data: outcomeData('j'), from: sql`FROM joined j WHERE j.desired = 'granted'` }),
        ])}
      )
      SELECT (SELECT count(*) FROM joined WHERE desired = 'granted')::int AS granted`);
    return rowsOf<{ granted: number }>(result)[0]!.granted > 0;
  }

  /** The member whose link someone else used: their row waiting for them is pending again, due at once, for a fresh link. */
  async relinkMember(projectId: string, now: Date, relink: { targetId: string; userId: string; error: AccessError }): Promise<void> {
    await this.db.execute(markWrites(
      sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = ${at(now)}, last_error = ${JSON.stringify(relink.error)}::jsonb, updated_at = now()
          WHERE a.target_id = ${relink.targetId} AND a.user_id = ${relink.userId} AND a.project_id = ${projectId}
            AND a.desired = 'granted' AND a.state = 'waiting_for_member'`,
      ['access'],
    ));
  }

  /** The user left or was removed: their granted synced row waits for them again. */
  async memberLeft(projectId: string, left: { targetId: string; userId: string; error: AccessError }): Promise<void> {
    await this.db.execute(sql`
      UPDATE access a SET state = 'waiting_for_member', applied = 'revoked', last_error = ${JSON.stringify(left.error)}::jsonb, updated_at = now()
      WHERE a.target_id = ${left.targetId} AND a.user_id = ${left.userId} AND a.project_id = ${projectId}
        AND a.desired = 'granted' AND a.state = 'synced'`);
  }

  /**
   * The bot has its rights in the chat again: an unhealthy target is healthy, and, as an owner's
   * update of the target does (TargetsStore.updateMany), its failed rows are pending again.
   */
  async healTarget(projectId: string, now: Date, targetId: string): Promise<void> {
    await this.db.execute(sql`
      WITH healed AS (
        UPDATE targets SET health = 'ok', health_error = NULL, updated_at = now()
        WHERE id = ${targetId} AND project_id = ${projectId} AND health <> 'ok'
        RETURNING id
      ), retried AS (${markWrites(
        sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = ${at(now)}, last_error = NULL, failed_generation = NULL, updated_at = now()
            FROM healed h WHERE a.target_id = h.id AND a.project_id = ${projectId} AND a.state = 'failed'`,
        ['access'],
      )})
      SELECT 1`);
  }

  /**
   * The bot's token was refused (401) while polling: the integration is flagged unhealthy with
   * the error, as the access worker flags it after a refused call, so its lease is let go and
   * nobody takes it until the owner connects a working token. Only by the lease holder.
   */
  async flagUnauthorized(owner: string, bot: TelegramBotKey, now: Date, error: AccessError): Promise<boolean> {
    const result = await this.db.execute(sql`
      UPDATE integrations SET health = 'unhealthy', last_error = ${JSON.stringify(error)}::jsonb, updated_at = now()
      WHERE project_id = ${bot.projectId} AND platform = 'telegram' AND bot_id = ${bot.botId}
        AND lease_owner = ${owner} AND lease_expires_at > ${at(now)}
      RETURNING 1`);
    return rowsOf(result).length > 0;
  }

  /** The bot connected to a project's Telegram integration (its deliveries' secret is made for it); null when none. */
  async webhookBot(projectId: string): Promise<string | null> {
    const result = await this.db.execute(sql`
      SELECT bot_id FROM integrations WHERE project_id = ${projectId} AND platform = 'telegram'`);
    return rowsOf<{ bot_id: string }>(result)[0]?.bot_id ?? null;
  }

  /**
   * Stores an update the webhook received for `bot`, while that bot is still the project's (a
   * repeat is a no-op); returns whether it was new. The commit wakes the holder (the `access`
   * wake-up, here and in the other processes).
   */
  async receiveWebhook(bot: TelegramBotKey, now: Date, update: ReceivedUpdate): Promise<boolean> {
    const result = await this.db.execute(markWrites(
      sql`INSERT INTO telegram_updates (project_id, bot_id, update_id, payload, received_at)
          SELECT project_id, bot_id, ${update.updateId}::bigint, ${storable(update.payload)}::jsonb, ${at(now)}
          FROM integrations WHERE project_id = ${bot.projectId} AND platform = 'telegram' AND bot_id = ${bot.botId}
          ON CONFLICT DO NOTHING
          RETURNING 1`,
      ['access'],
    ));
    return rowsOf(result).length > 0;
  }
}

/** The lease of `owner` on the bot, at `now`, while the integration's bot is still `bot.botId`. */
function lease(owner: string, bot: TelegramBotKey, now: Date): SQL {
  return sql`SELECT generation FROM integrations
    WHERE project_id = ${bot.projectId} AND platform = 'telegram' AND bot_id = ${bot.botId}
      AND lease_owner = ${owner} AND lease_expires_at > ${at(now)}`;
}
