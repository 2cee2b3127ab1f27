import { sql } from 'drizzle-orm';
import type { Platform } from '../domain/targets/target.view.js';
import type { ClaimedConfirmation, ConfirmationOutcomes, ConfirmationQueue } from '../domain/front-desk/confirmations.js';
import { rowsOf, type Db } from '../database/db.js';
import { at, iso } from '../database/sql.js';
import { messagePlatform } from './message-queueing.js';
import { insertEvent } from './outbox.js';
import { DEFAULT_SETTINGS, SETTING_VALIDATORS, type SettingKey, type Settings } from '../domain/settings/settings.catalogue.js';
import type { MessageKind, Voice } from '../domain/lifecycle/member-messages.js';

/**
 * The confirmations the project's bot sends members after a payment, and the members it could not
 * reach (docs/front-desk.md, "Confirmations"; schema in schema/notifications.ts). Each method is
 * one statement; what to send, and what an answer means, is src/domain/front-desk/confirmations.ts's.
 */

type Json<T> = T | string;
const parsed = <T>(v: Json<T>): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

interface ClaimedRow {
  id: string;
  kind: MessageKind;
  project_id: string;
  user_id: string;
  platform: Platform;
  attempts: number;
  plan_name: string | null;
  end_date: string | null;
  status: string | null;
  bot: 'held' | 'unhealthy' | null;
  invites: Json<string[]>;
  carried: Json<string[]>;
  invite: Json<{ link: string; chat_name: string; expires_at: string; join_request: boolean } | null>;
  written_for: string | null;
  created_at: string;
  plan_id: string | null;
  recurring: boolean | null;
  trial: boolean | null;
  cancel_at_period_end: boolean | null;
  name: string | null;
  settings: Json<Record<string, unknown> | null>;
}

/** The settings a message reads, stored values over defaults (a stored value that no longer validates reads as the default). */
function voiceOf(stored: Record<string, unknown> | null): { voice: Voice; quietHours: string | null } {
  const get = <K extends SettingKey>(key: K): Settings[K] => {
    if (stored && Object.hasOwn(stored, key)) {
      const checked = SETTING_VALIDATORS[key](stored[key]);
      if (checked.ok) return checked.value;
    }
    return DEFAULT_SETTINGS[key];
  };
  return {
    voice: {
      language: get('default_language'),
      timeZone: get('timezone_preference'),
      dateFormat: get('date_format_preference'),
      timeFormat: get('time_format_preference'),
      messages: get('messages'),
    },
    quietHours: get('quiet_hours'),
  };
}

export class NotificationsStore implements ConfirmationQueue, ConfirmationOutcomes {
  constructor(private readonly db: Db) {}

  /**
   * Queues the confirmation of the member's membership of the plan for the payment `paymentKey`,
   * once per payment: on the platform of the plan's targets (else the project's one bot), and only
   * when the project has a bot there. Runs in the payment's transaction.
   */
  async queueConfirmation(g: { projectId: string; userId: string; planId: string; paymentKey: string }, now: Date): Promise<boolean> {
    const result = await this.db.execute(sql`
      INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform, next_attempt_at, created_at)
      SELECT m.project_id, m.user_id, m.id, 'confirmation', ${`payment:${g.paymentKey}`}, pf.platform, ${at(now)}, ${at(now)}
      FROM memberships m
      CROSS JOIN LATERAL (
        SELECT ${messagePlatform('m')} AS platform
      ) pf
      WHERE m.project_id = ${g.projectId} AND m.user_id = ${g.userId} AND m.plan_id = ${g.planId}
        AND EXISTS (SELECT 1 FROM integrations i WHERE i.project_id = m.project_id AND i.platform = pf.platform)
      ORDER BY m.end_date DESC
      LIMIT 1
      ON CONFLICT (project_id, dedupe_key) DO NOTHING
      RETURNING id`);
    return rowsOf(result).length > 0;
  }

  /**
   * Claims up to `limit` due messages (`FOR UPDATE SKIP LOCKED`: processes claim past each other),
   * pushing each one's next attempt to `leaseUntil` so no other process sends it meanwhile.
   *
   * - Only messages this process may send: their project's bot on that platform is leased to one
   *   of `owners` (the lease alive at `now`), so a bot's messages go through the one client that
   *   holds its rate-limit budget. Messages with no bot to send them (disconnected, or unhealthy:
   *   nobody leases it) are claimed by anyone, to be ended without a call.
   *
   * - A Telegram confirmation whose plan grants a chat waits (up to `inviteWaitMs`) until the
   *   access engine has settled the member's access there, so it can carry their invite link.
   * - An invite row waits while a Telegram confirmation of the same membership is pending: that
   *   one carries the link (a Discord DM never does). A Telegram confirmation carries the member's current links but those an invite row of their
   *   own has sent or is sending (tried at least once), and locks the untried invite rows it takes
   *   over: a process claiming one of them at that moment is waited for, and its link left to it.
   */
  async claim(owners: readonly string[], now: Date, leaseUntil: Date, limit: number, inviteWaitMs: number): Promise<ClaimedConfirmation[]> {
    const result = await this.db.execute(sql`
      WITH locked AS (
        SELECT n.id FROM notifications n
        WHERE n.state = 'pending' AND n.next_attempt_at <= ${at(now)}
          AND NOT EXISTS (
            SELECT 1 FROM integrations i
            WHERE i.project_id = n.project_id AND i.platform = n.platform AND i.health = 'ok'
              AND (i.lease_owner IS NULL OR i.lease_owner <> ALL(${sql.param([...owners])}::text[])
                   OR i.lease_expires_at IS NULL OR i.lease_expires_at <= ${at(now)}))
          AND CASE WHEN n.kind = 'invite' THEN NOT EXISTS (
                SELECT 1 FROM notifications o
                WHERE o.project_id = n.project_id AND o.membership_id = n.membership_id AND o.kind = 'confirmation'
                  AND o.platform = 'telegram' AND o.state = 'pending')
              WHEN n.kind = 'confirmation' THEN (n.platform <> 'telegram' OR n.created_at <= ${at(new Date(now.getTime() - inviteWaitMs))}
               OR NOT EXISTS (
                 SELECT 1 FROM memberships m
                 JOIN plan_targets pt ON pt.plan_id = m.plan_id
                 JOIN targets t ON t.id = pt.target_id AND t.platform = 'telegram'
                 WHERE m.id = n.membership_id
                   AND NOT EXISTS (SELECT 1 FROM access a WHERE a.target_id = t.id AND a.user_id = n.user_id
                                   AND a.desired = 'granted' AND a.state <> 'pending')))
              ELSE true END
        ORDER BY n.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE notifications n SET attempts = n.attempts + 1, next_attempt_at = ${at(leaseUntil)}
        FROM locked WHERE n.id = locked.id
        RETURNING n.id, n.kind, n.dedupe_key, n.project_id, n.user_id, n.platform, n.attempts, n.membership_id, n.end_date AS written_for, n.created_at
      ), carried AS (
        SELECT x.id, x.dedupe_key, c.id AS confirmation_id FROM notifications x
        JOIN claimed c ON c.kind = 'confirmation' AND c.platform = 'telegram' AND x.project_id = c.project_id AND x.membership_id = c.membership_id
        WHERE x.kind = 'invite' AND x.state = 'pending' AND x.attempts = 0
        FOR UPDATE OF x
      )
      SELECT c.id, c.kind, c.project_id, c.user_id, c.platform, c.attempts, p.name AS plan_name,
             ${iso(sql`m.end_date`)} AS end_date, m.status,
             CASE WHEN i.project_id IS NULL THEN NULL WHEN i.health = 'ok' THEN 'held' ELSE 'unhealthy' END AS bot,
             (SELECT COALESCE(json_agg(ti.invite_link ORDER BY ti.created_at), '[]'::json) FROM telegram_invites ti
              WHERE c.kind = 'confirmation' AND c.platform = 'telegram' AND ti.project_id = c.project_id AND ti.membership_id = c.membership_id
                AND ti.revoked_at IS NULL AND ti.used_at IS NULL AND ti.expires_at > ${at(now)}
                AND NOT EXISTS (SELECT 1 FROM notifications x WHERE x.project_id = ti.project_id AND x.dedupe_key = 'invite:' || ti.id::text
                                AND NOT EXISTS (SELECT 1 FROM carried k WHERE k.id = x.id AND k.confirmation_id = c.id))) AS invites,
             (SELECT COALESCE(json_agg(k.id), '[]'::json) FROM carried k WHERE k.confirmation_id = c.id) AS carried,
             (SELECT json_build_object('link', ti.invite_link, 'chat_name', t.name, 'expires_at', ${iso(sql`ti.expires_at`)}, 'join_request', ti.creates_join_request)
              FROM telegram_invites ti JOIN targets t ON t.id = ti.target_id
              WHERE c.kind = 'invite' AND ti.project_id = c.project_id AND 'invite:' || ti.id::text = c.dedupe_key
                AND ti.revoked_at IS NULL AND ti.used_at IS NULL AND ti.expires_at > ${at(now)}) AS invite,
             ${iso(sql`c.written_for`)} AS written_for, ${iso(sql`c.created_at`)} AS created_at, m.plan_id, p.recurring,
             m.trial_ends_at IS NOT NULL AND m.trial_ends_at > ${at(now)} AS trial, m.subscription_cancel_at_period_end AS cancel_at_period_end,
             COALESCE(u.first_name, u.username) AS name,
             (SELECT jsonb_object_agg(s.key, s.value) FROM settings s WHERE s.project_id = c.project_id
                AND s.key IN ('default_language', 'timezone_preference', 'date_format_preference', 'time_format_preference', 'quiet_hours', 'messages')) AS settings
      FROM claimed c
      LEFT JOIN memberships m ON m.id = c.membership_id
      LEFT JOIN users u ON u.project_id = c.project_id AND u.user_id = c.user_id
      LEFT JOIN plans p ON p.id = m.plan_id
      LEFT JOIN integrations i ON i.project_id = c.project_id AND i.platform = c.platform`);
    return rowsOf<ClaimedRow>(result).map((r) => {
      const invite = parsed(r.invite);
      return {
        id: r.id,
        kind: r.kind,
        projectId: r.project_id,
        userId: r.user_id,
        platform: r.platform,
        attempt: r.attempts,
        name: r.name,
        planName: r.plan_name,
        planId: r.plan_id,
        recurring: r.recurring ?? false,
        endDate: r.end_date === null ? null : new Date(r.end_date),
        active: r.status === 'active',
        trial: r.trial ?? false,
        cancelAtPeriodEnd: r.cancel_at_period_end ?? false,
        writtenFor: r.written_for === null ? null : new Date(r.written_for),
        createdAt: new Date(r.created_at),
        bot: r.bot,
        invites: parsed(r.invites),
        carried: parsed(r.carried),
        invite: invite === null ? null : { link: invite.link, chatName: invite.chat_name, expiresAt: new Date(invite.expires_at), joinRequest: invite.join_request },
        ...voiceOf(parsed(r.settings)),
      };
    });
  }

  /** Sent, with the invite rows whose links it carried dropped (they reached the member in it): one statement. */
  async sent(id: string, now: Date, carried: readonly string[] = []): Promise<void> {
    await this.db.execute(sql`
      WITH done AS (
        UPDATE notifications SET state = 'sent', sent_at = ${at(now)}, last_error = NULL WHERE id = ${id} AND state = 'pending' RETURNING id
      )
      UPDATE notifications SET state = 'dropped', last_error = 'carried by the confirmation'
      WHERE id = ANY(${sql.param([...carried])}::uuid[]) AND state = 'pending' AND EXISTS (SELECT 1 FROM done)`);
  }

  async retry(id: string, next: Date, error: string): Promise<void> {
    await this.db.execute(sql`UPDATE notifications SET next_attempt_at = ${at(next)}, last_error = ${error} WHERE id = ${id} AND state = 'pending'`);
  }

  /** The bot is held elsewhere now: due at once for its holder, the attempt this claim counted taken back. */
  async giveBack(id: string, now: Date, error: string): Promise<void> {
    await this.db.execute(sql`
      UPDATE notifications SET next_attempt_at = ${at(now)}, attempts = greatest(attempts - 1, 0), last_error = ${error} WHERE id = ${id} AND state = 'pending'`);
  }

  /** Held on purpose (quiet hours): due at `until`, the attempt this claim counted taken back. */
  async hold(id: string, until: Date, why: string): Promise<void> {
    await this.db.execute(sql`
      UPDATE notifications SET next_attempt_at = ${at(until)}, attempts = greatest(attempts - 1, 0), last_error = ${why} WHERE id = ${id} AND state = 'pending'`);
  }

  /** Ends it unsent: `failed` (retries used up, or refused for good), `dropped` (nothing left to confirm, or no bot). */
  async finish(id: string, state: 'failed' | 'dropped', error: string): Promise<void> {
    await this.db.execute(sql`UPDATE notifications SET state = ${state}, last_error = ${error} WHERE id = ${id} AND state = 'pending'`);
  }

  /**
   * Ends it `unreachable` and records the member unreachable on its platform, with one
   * `notification.failed` event, unless they are recorded already: one statement. True when
   * this recorded them.
   */
  async unreachable(n: Pick<ClaimedConfirmation, 'id' | 'userId' | 'platform'>, reason: string, error: string, now: Date): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH marked AS (
        UPDATE notifications SET state = 'unreachable', last_error = ${error} WHERE id = ${n.id} AND state = 'pending'
        RETURNING project_id
      ), recorded AS (
        INSERT INTO unreachable_members (project_id, user_id, platform, reason, since)
        SELECT project_id, ${n.userId}, ${n.platform}, ${reason}, ${at(now)} FROM marked
        ON CONFLICT DO NOTHING
        RETURNING project_id, user_id, platform, reason
      ), announced AS (
        ${insertEvent('notification.failed', {
          projectId: sql`r.project_id`,
          data: { user_id: sql<string>`r.user_id`, channel: sql<Platform>`r.platform`, reason: sql<string>`r.reason` },
          from: sql`FROM recorded r`,
        })}
      )
      SELECT count(*)::int AS recorded FROM recorded`);
    return (rowsOf<{ recorded: number }>(result)[0]?.recorded ?? 0) > 0;
  }

  /** The member talked to the bot: they are reachable again there. True when they were recorded unreachable. */
  async clearUnreachable(projectId: string, userId: string, platform: Platform): Promise<boolean> {
    const result = await this.db.execute(sql`
      DELETE FROM unreachable_members WHERE project_id = ${projectId} AND user_id = ${userId} AND platform = ${platform} RETURNING user_id`);
    return rowsOf(result).length > 0;
  }

  /** Since when, and why, the member is unreachable on each platform (empty when reachable). */
  async unreachableOf(projectId: string, userId: string): Promise<{ platform: Platform; reason: string; since: Date }[]> {
    const result = await this.db.execute(sql`
      SELECT platform, reason, ${iso(sql`since`)} AS since FROM unreachable_members WHERE project_id = ${projectId} AND user_id = ${userId} ORDER BY platform`);
    return rowsOf<{ platform: Platform; reason: string; since: string }>(result).map((r) => ({ ...r, since: new Date(r.since) }));
  }
}
