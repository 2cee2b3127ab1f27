import { sql, type SQL } from 'drizzle-orm';
import type { InviteView } from '../domain/events.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { at, iso } from '../database/sql.js';

/**
 * The invite links tenure made on Telegram, one member each (docs/access-telegram.md; schema in
 * schema/telegram.ts). A link is *current* while not revoked, not used and not expired at `now`
 * (the app clock): that is what a member is handed, and what the connector reuses instead of
 * making another. A link is *live* while not revoked and not expired, used or not: a single-use
 * link counts the members who joined through it and are still in (Telegram's `member_limit` is
 * "simultaneously"), so once its member is out it opens again, and ending access revokes it too.
 */

/** One stored link, as the connector and the update handling need it. */
export interface TelegramInvite {
  id: string;
  projectId: string;
  targetId: string;
  userId: string;
  membershipId: string | null;
  chatId: string;
  /** The bot that made it: only its creator can revoke it. */
  botId: string;
  inviteLink: string;
  name: string;
  createsJoinRequest: boolean;
  expiresAt: Date;
  createdAt: Date;
  usedAt: Date | null;
  usedBy: string | null;
  revokedAt: Date | null;
}

/** An invite as written when Telegram made it (`createdAt` on the app clock): not yet used or revoked. */
export type NewInvite = Omit<TelegramInvite, 'id' | 'usedAt' | 'usedBy' | 'revokedAt'>;

/** `InviteView` of the invite relation aliased `alias`: the event and the API show the same object. */
function inviteJson(alias: string): SQL<InviteView> {
  const a = sql.raw(alias);
  return sql<InviteView>`jsonb_build_object(
    'target_id', ${a}.target_id::text, 'chat_id', ${a}.chat_id, 'invite_link', ${a}.invite_link,
    'kind', CASE WHEN ${a}.creates_join_request THEN 'join_request' ELSE 'single_use' END,
    'expires_at', ${iso(sql`${a}.expires_at`)}, 'created_at', ${iso(sql`${a}.created_at`)})`;
}

const COLUMNS = sql.raw(`id, project_id, target_id, user_id, membership_id, chat_id, bot_id, invite_link, name, creates_join_request,
  expires_at, created_at, used_at, used_by, revoked_at`);

interface InviteRow {
  id: string;
  project_id: string;
  target_id: string;
  user_id: string;
  membership_id: string | null;
  chat_id: string;
  bot_id: string;
  invite_link: string;
  name: string;
  creates_join_request: boolean;
  expires_at: string | Date;
  created_at: string | Date;
  used_at: string | Date | null;
  used_by: string | null;
  revoked_at: string | Date | null;
}

const dateOf = (v: string | Date): Date => (v instanceof Date ? v : new Date(v));
const dateOrNull = (v: string | Date | null): Date | null => (v === null ? null : dateOf(v));

function inviteOf(r: InviteRow): TelegramInvite {
  return {
    id: r.id,
    projectId: r.project_id,
    targetId: r.target_id,
    userId: r.user_id,
    membershipId: r.membership_id,
    chatId: r.chat_id,
    botId: r.bot_id,
    inviteLink: r.invite_link,
    name: r.name,
    createsJoinRequest: r.creates_join_request,
    expiresAt: dateOf(r.expires_at),
    createdAt: dateOf(r.created_at),
    usedAt: dateOrNull(r.used_at),
    usedBy: r.used_by,
    revokedAt: dateOrNull(r.revoked_at),
  };
}

export class TelegramInvitesStore {
  constructor(private readonly db: Db) {}

  /**
   * Stores a link Telegram just made and its `access.invite-created` event, in one statement (one
   * transaction): the member's link is announced exactly when it is stored. For a member who paid,
   * the same statement queues the link's message to them (a notifications row of kind `invite`,
   * one per link: docs/front-desk.md, "Confirmations"), so a link is never made without it.
   */
  async record(invite: NewInvite): Promise<TelegramInvite> {
    const result = await this.db.execute(sql`
      WITH created AS (
        INSERT INTO telegram_invites (project_id, target_id, user_id, membership_id, chat_id, bot_id, invite_link, name,
                                      creates_join_request, expires_at, created_at)
        VALUES (${invite.projectId}, ${invite.targetId}, ${invite.userId}, ${invite.membershipId}, ${invite.chatId}, ${invite.botId},
                ${invite.inviteLink}, ${invite.name}, ${invite.createsJoinRequest}, ${at(invite.expiresAt)}, ${at(invite.createdAt)})
        RETURNING ${COLUMNS}
      ), announced AS (
        ${insertEvent('access.invite-created', {
          projectId: sql`c.project_id`,
          data: {
            user_id: sql<string>`c.user_id`,
            target_id: sql<string>`c.target_id::text`,
            platform: sql<'telegram'>`'telegram'`,
            membership_id: sql<string | null>`c.membership_id::text`,
            invite: inviteJson('c'),
          },
          from: sql`FROM created c`,
        })}
      ), queued AS (
        INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform, next_attempt_at, created_at)
        SELECT c.project_id, c.user_id, c.membership_id, 'invite', 'invite:' || c.id::text, 'telegram', c.created_at, c.created_at
        FROM created c
        WHERE c.membership_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM payments p WHERE p.project_id = c.project_id AND p.user_id = c.user_id AND p.status = 'succeeded')
        ON CONFLICT (project_id, dedupe_key) DO NOTHING
      )
      SELECT ${COLUMNS} FROM created`);
    return inviteOf(rowsOf<InviteRow>(result)[0]!);
  }

  /** The member's current links to one target (not revoked, not used, not expired at `now`), newest first. */
  async current(projectId: string, targetId: string, userId: string, now: Date): Promise<TelegramInvite[]> {
    return this.select(sql`project_id = ${projectId} AND user_id = ${userId} AND target_id = ${targetId}
      AND revoked_at IS NULL AND used_at IS NULL AND expires_at > ${at(now)}`);
  }

  /** The member's live links to one target (not revoked, not expired at `now`; used ones too), newest first: what ending access revokes. */
  async live(projectId: string, targetId: string, userId: string, now: Date): Promise<TelegramInvite[]> {
    return this.select(sql`project_id = ${projectId} AND user_id = ${userId} AND target_id = ${targetId}
      AND revoked_at IS NULL AND expires_at > ${at(now)}`);
  }

  /** Marks links revoked on Telegram (a link already marked keeps its first time); returns how many were marked now. */
  async markRevoked(ids: readonly string[], when: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.db.execute(sql`
      UPDATE telegram_invites SET revoked_at = ${at(when)}
      WHERE id = ANY(${sql.param([...ids])}::uuid[]) AND revoked_at IS NULL
      RETURNING id`);
    return rowsOf(result).length;
  }

  /** The link of the project with this exact URL (a join's `invite_link`), or null. */
  async byLink(projectId: string, inviteLink: string): Promise<TelegramInvite | null> {
    return (await this.select(sql`project_id = ${projectId} AND invite_link = ${inviteLink}`))[0] ?? null;
  }

  /**
   * Records who joined through a link, once: the first use is kept (a repeated update changes
   * nothing). Returns whether this call marked it.
   */
  async markUsed(id: string, userId: string, when: Date): Promise<boolean> {
    const result = await this.db.execute(sql`
      UPDATE telegram_invites SET used_at = ${at(when)}, used_by = ${userId}
      WHERE id = ${id} AND used_at IS NULL
      RETURNING id`);
    return rowsOf(result).length > 0;
  }

  /**
   * The current links of a membership's member, every target, newest first; null when the project
   * has no such membership. By member, not by the membership id a link was named after: a link
   * made for a member's earlier membership and still current is the one the connector hands out.
   */
  async currentForMembership(projectId: string, membershipId: string, now: Date): Promise<InviteView[] | null> {
    const result = await this.db.execute(sql`
      SELECT m.id AS membership_id, i.invite
      FROM memberships m
      LEFT JOIN LATERAL (
        SELECT ${inviteJson('t')} AS invite, t.created_at, t.id FROM telegram_invites t
        WHERE t.project_id = m.project_id AND t.user_id = m.user_id
          AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > ${at(now)}
      ) i ON true
      WHERE m.project_id = ${projectId} AND m.id = ${membershipId}
      ORDER BY i.created_at DESC, i.id DESC`);
    const rows = rowsOf<{ membership_id: string; invite: InviteView | null }>(result);
    if (rows.length === 0) return null;
    return rows.flatMap((r) => (r.invite ? [r.invite] : []));
  }

  /**
   * A link someone joined through (an update's effect): used, the first use kept, and revoked too
   * when `revoked` (the bot revoked it on Telegram).
   */
  async markLinkUsed(projectId: string, now: Date, link: { inviteLink: string; usedBy: string; revoked: boolean }): Promise<void> {
    await this.db.execute(sql`
      UPDATE telegram_invites SET
        used_at = coalesce(used_at, ${at(now)}),
        used_by = CASE WHEN used_at IS NULL THEN ${link.usedBy} ELSE used_by END,
        revoked_at = CASE WHEN ${link.revoked}::boolean THEN coalesce(revoked_at, ${at(now)}) ELSE revoked_at END
      WHERE invite_link = ${link.inviteLink} AND project_id = ${projectId}`);
  }

  private async select(where: SQL): Promise<TelegramInvite[]> {
    const result = await this.db.execute(sql`
      SELECT ${COLUMNS} FROM telegram_invites WHERE ${where} ORDER BY created_at DESC, id DESC`);
    return rowsOf<InviteRow>(result).map(inviteOf);
  }
}
