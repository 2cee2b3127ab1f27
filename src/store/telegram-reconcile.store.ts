import { sql } from 'drizzle-orm';
import type { AccessOutcome } from '../domain/events.js';
import { rowsOf, type Db } from '../database/db.js';
import { eventRows, insertEvents } from './outbox.js';
import { healTargets } from './targets.store.js';
import { repairUpdate } from './access-reconcile.store.js';
import { at } from '../database/sql.js';

/**
 * Telegram drift repair's SQL (src/access/telegram/telegram.reconciler.ts, docs/access-discord.md "Drift
 * repair"): which bots are due, which chats a project's targets name, which members of a chat to
 * ask Telegram about (only rows tenure manages: Telegram has no member list to read, and asking
 * costs a call each), and the repairs a page of answers calls for, set-based (one statement per
 * page, the answers passed as one JSON parameter).
 *
 * As on Discord (src/store/access-reconcile.store.ts), only rows at rest are compared: `synced` and
 * `waiting_for_member`, and only those not written after `seenAt` (the database's clock, read before
 * the first question): a row the worker or an update wrote meanwhile is newer than the answers. A
 * repair makes the row `pending` with what Telegram showed as `applied`, so the worker makes the
 * one call that differs and writes its event; the one repair that needs no call (a member tenure
 * waited for is in the chat: a join whose update was missed) is written `synced` with its
 * `access.granted` event in the same statement.
 */

/** Where a member stands in a chat, as getChatMember shows it (src/access/telegram/chat-members.ts, presenceOf). */
export type Presence = 'member' | 'admin' | 'absent';

/** One answer of getChatMember about a member of the chat. */
export interface ChatAnswer {
  userId: string;
  presence: Presence;
}

/** A Telegram chat tenure manages: its target and the chat id (`external_id`) to ask about. */
export interface ManagedChat {
  targetId: string;
  chatId: string;
}

export interface DueBot {
  projectId: string;
  botId: string;
}

/** What one page's statement repaired, by kind of drift. */
export interface ChatRepairs {
  /** Access ended, still in a `kick` chat (not as its owner or an admin): the worker removes them. */
  remove: number;
  /** Waited for, and in the chat (a join whose update was missed): synced, `access.granted`. */
  joined: number;
  /** Access is active, synced, and they are not in the chat any more: the worker makes a fresh link. */
  left: number;
  /** Waited for, not in the chat, and their link has expired (or there is none): the worker makes a fresh one. */
  relink: number;
}

/** As every `health_error`: Telegram's error code as a string (`'403'`), and its description. */
export interface ChatError {
  code: string;
  message: string;
}

export const noChatRepairs = (): ChatRepairs => ({ remove: 0, joined: 0, left: 0, relink: 0 });

/** Rows compared: at rest, not written after `seenAt`, and with a repair possible (a revoke that leaves them in has none). */
const compared = (seenAt: Date) =>
  sql`a.state IN ('synced', 'waiting_for_member') AND a.updated_at <= ${at(seenAt)} AND (a.desired = 'granted' OR a.on_expiry = 'kick')`;

export class TelegramReconcileStore {
  constructor(private readonly db: Db) {}

  /**
   * Telegram bots leased to `owner` (the Telegram worker's lease, running at `now`) whose last
   * comparison is older than `everyMs` or that were never compared; healthy ones only.
   */
  async due(owner: string, now: Date, everyMs: number): Promise<DueBot[]> {
    const result = await this.db.execute(sql`
      SELECT project_id AS "projectId", bot_id AS "botId" FROM integrations
      WHERE platform = 'telegram' AND lease_owner = ${owner} AND lease_expires_at > ${at(now)} AND health = 'ok'
        AND (reconciled_at IS NULL OR reconciled_at <= ${at(now)} - make_interval(secs => ${everyMs / 1000}))
      ORDER BY reconciled_at NULLS FIRST, project_id`);
    return rowsOf<DueBot>(result);
  }

  /** The project's Telegram targets (one per chat), by chat id. A deleted target is not compared: it is not tenure's any more. */
  async chats(projectId: string): Promise<ManagedChat[]> {
    const result = await this.db.execute(sql`
      SELECT id AS "targetId", external_id AS "chatId" FROM targets
      WHERE project_id = ${projectId} AND platform = 'telegram'
      ORDER BY external_id`);
    return rowsOf<ManagedChat>(result);
  }

  /** The database's clock: rows written after this instant are newer than answers asked for after it. */
  async now(): Promise<Date> {
    const result = await this.db.execute(sql`SELECT now() AS now`);
    return new Date(rowsOf<{ now: Date | string }>(result)[0]!.now);
  }

  /**
   * The next `limit` members of the chat's target to ask about, after `afterUserId` (ids in text
   * order: a keyset over the target's primary key): those with a row at rest that a repair could
   * change. Members tenure has no row for are never named, so never asked about.
   */
  async membersToAsk(projectId: string, targetId: string, seenAt: Date, afterUserId: string | null, limit: number): Promise<string[]> {
    const result = await this.db.execute(sql`
      SELECT a.user_id FROM access a
      WHERE a.target_id = ${targetId} AND a.project_id = ${projectId} AND a.platform = 'telegram' AND ${compared(seenAt)}
        AND (${afterUserId}::text IS NULL OR a.user_id > ${afterUserId}::text)
      ORDER BY a.user_id
      LIMIT ${limit}`);
    return rowsOf<{ user_id: string }>(result).map((r) => r.user_id);
  }

  /**
   * Compares a page of answers with the rows of those members in the chat's target, and repairs:
   * - desired revoked, `on_expiry` kick, still a member (not owner, not admin) → applied granted,
   *   pending: the worker removes them (ban, then unban with `only_if_banned`);
   * - desired granted, `waiting_for_member`, in the chat → synced, applied granted, with its
   *   `access.granted` event (the join's update was missed);
   * - desired granted, synced, not in the chat (left, removed) → applied revoked, pending: the worker
   *   makes them a fresh link;
   * - desired granted, `waiting_for_member`, not in the chat, and no current link (unrevoked,
   *   unused, not expired at `now`, the app clock the links were made with) → applied revoked,
   *   pending: the worker makes a fresh link.
   * Rows written after `seenAt` are left: re-read on the locked row, so a completion in between wins.
   */
  async repairPage(projectId: string, targetId: string, answers: readonly ChatAnswer[], seenAt: Date, now: Date): Promise<ChatRepairs> {
    if (answers.length === 0) return noChatRepairs();
    const page = JSON.stringify(answers.map((a) => ({ user_id: a.userId, presence: a.presence })));
    const result = await this.db.execute(sql`
      WITH page AS (
        SELECT p.user_id, p.presence FROM jsonb_to_recordset(${page}::jsonb) AS p(user_id text, presence text)
      ), found AS (
        SELECT a.target_id, a.user_id,
          CASE
            WHEN a.desired = 'revoked' AND a.on_expiry = 'kick' AND p.presence = 'member' THEN 'remove'
            WHEN a.desired = 'granted' AND a.state = 'waiting_for_member' AND p.presence IN ('member', 'admin') THEN 'joined'
            WHEN a.desired = 'granted' AND a.state = 'synced' AND p.presence = 'absent' THEN 'left'
            WHEN a.desired = 'granted' AND a.state = 'waiting_for_member' AND p.presence = 'absent' AND NOT EXISTS (
              SELECT 1 FROM telegram_invites i
              WHERE i.project_id = a.project_id AND i.user_id = a.user_id AND i.target_id = a.target_id
                AND i.revoked_at IS NULL AND i.used_at IS NULL AND i.expires_at > ${at(now)}
            ) THEN 'relink'
          END AS repair
        FROM page p
        JOIN access a ON a.target_id = ${targetId} AND a.user_id = p.user_id
        WHERE a.project_id = ${projectId} AND a.platform = 'telegram' AND ${compared(seenAt)}
      ), repaired AS (
        ${repairUpdate({ revoke: 'remove', synced: 'joined', syncedAt: at(now), seenAt: at(seenAt) })}
      ), announced AS (
        ${insertEvents([
          eventRows('access.granted', {
            projectId: sql`${projectId}::uuid`,
            data: { user_id: sql<string>`r.user_id`, target_id: sql<string>`r.target_id::text`, platform: sql<AccessOutcome['platform']>`r.platform` },
            from: sql`FROM repaired r WHERE r.repair = 'joined' ORDER BY r.user_id`,
          }),
        ])}
      )
      SELECT count(*) FILTER (WHERE repair = 'remove')::int AS remove,
             count(*) FILTER (WHERE repair = 'joined')::int AS joined,
             count(*) FILTER (WHERE repair = 'left')::int AS left,
             count(*) FILTER (WHERE repair = 'relink')::int AS relink
      FROM repaired`);
    return rowsOf<ChatRepairs>(result)[0]!;
  }

  /**
   * The bot cannot see the chat (403: removed from it, not a member; 400: chat not found, or it
   * became a supergroup with another id): its target is flagged unhealthy with Telegram's error,
   * shown in its GET. Access rows are left as they are.
   */
  async markChatUnhealthy(projectId: string, targetId: string, error: ChatError): Promise<void> {
    const healthError = JSON.stringify({ code: error.code, message: error.message });
    await this.db.execute(sql`
      UPDATE targets SET health = 'unhealthy', health_error = ${healthError}::jsonb, updated_at = now()
      WHERE id = ${targetId} AND project_id = ${projectId} AND health_error IS DISTINCT FROM ${healthError}::jsonb`);
  }

  /**
   * The bot saw the chat again (getChatMember answered there): a target flagged because the chat
   * could not be seen (Telegram's 403, or 400 "chat not found") is healthy again, and its rows that
   * failed meanwhile are retried, as after a target update. Other ill health (400 "not enough
   * rights") is not the comparison's to clear: seeing the chat does not give the bot its rights.
   */
  async clearChatRefusal(projectId: string, targetId: string): Promise<void> {
    await this.db.execute(
      healTargets(sql`id = ${targetId} AND project_id = ${projectId}
        AND (health_error->>'code' = '403' OR (health_error->>'code' = '400' AND health_error->>'message' ILIKE '%chat not found%'))`),
    );
  }

  /** The comparison of this project's Telegram bot ended at `at` (the app's clock, as `due` reads it). */
  async markReconciled(projectId: string, now: Date): Promise<void> {
    await this.db.execute(sql`
      UPDATE integrations SET reconciled_at = ${at(now)}
      WHERE project_id = ${projectId} AND platform = 'telegram'`);
  }
}
