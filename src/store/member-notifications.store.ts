import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { iso } from '../database/sql.js';
import type { NotificationView } from '../domain/users/notification.view.js';

/**
 * A member's messages as the API lists them (docs/lifecycle.md, "What each member was sent"): the
 * `notifications` rows queued for them, and the reminders written `skipped` (no row of their own),
 * newest first. Read only; the rows are written by notifications.store.ts and reminders.store.ts.
 */

/** What ConfirmationJob writes as the reason of a message it holds through quiet hours (src/domain/front-desk/confirmations.ts). */
const QUIET_HOURS_HOLD = 'quiet hours';

interface Row {
  known: boolean;
  total: number;
  items: NotificationView[] | string;
}

export class MemberNotificationsStore {
  constructor(private readonly db: Db) {}

  /** Members the bot cannot reach (docs/front-desk.md, "Members the bot cannot reach"), counted by platform and reason. */
  async unreachableCounts(projectId: string): Promise<{ platform: string; reason: string; count: number }[]> {
    const result = await this.db.execute(sql`
      SELECT platform, reason, count(*)::int AS count FROM unreachable_members
      WHERE project_id = ${projectId} GROUP BY platform, reason ORDER BY platform, reason`);
    return rowsOf<{ platform: string; reason: string; count: number }>(result);
  }

  /** One page of the member's messages, newest first (ties by id); null when the project has not seen the member. */
  async list(projectId: string, userId: string, page: { limit: number; offset: number }): Promise<{ items: NotificationView[]; total: number } | null> {
    const result = await this.db.execute(sql`
      WITH items AS (
        SELECT n.id::text AS sort_id, n.created_at AS sort_at, n.id::text AS notification_id, n.kind, n.platform,
               CASE WHEN n.state <> 'pending' THEN n.state WHEN n.last_error = ${QUIET_HOURS_HOLD} THEN 'held' ELSE 'queued' END AS state,
               n.attempts, n.last_error, n.reminder_offset, n.end_date, n.created_at, n.sent_at,
               CASE WHEN n.state = 'pending' THEN n.next_attempt_at END AS next_attempt_at
        FROM notifications n WHERE n.project_id = ${projectId} AND n.user_id = ${userId}
        UNION ALL
        SELECT 'reminder:' || r.membership_id::text || ':' || r.reminder_offset, r.created_at, NULL, 'reminder', NULL, 'skipped',
               0, 'a nearer reminder was due at the same time', r.reminder_offset, r.end_date, r.created_at, NULL, NULL
        FROM memberships m JOIN reminders r ON r.membership_id = m.id
        WHERE m.project_id = ${projectId} AND m.user_id = ${userId} AND r.state = 'skipped'
      )
      SELECT EXISTS (SELECT 1 FROM users u WHERE u.project_id = ${projectId} AND u.user_id = ${userId}) AS known,
             (SELECT count(*)::int FROM items) AS total,
             (SELECT COALESCE(json_agg(json_build_object(
                'notification_id', p.notification_id, 'kind', p.kind, 'platform', p.platform, 'state', p.state,
                'attempts', p.attempts, 'last_error', p.last_error,
                'reminder', CASE WHEN p.kind = 'reminder' AND p.end_date IS NOT NULL
                            THEN json_build_object('offset', p.reminder_offset, 'end_date', ${iso(sql`p.end_date`)}) END,
                'created_at', ${iso(sql`p.created_at`)}, 'sent_at', ${iso(sql`p.sent_at`)}, 'next_attempt_at', ${iso(sql`p.next_attempt_at`)})
                ORDER BY p.sort_at DESC, p.sort_id DESC), '[]'::json)
              FROM (SELECT * FROM items ORDER BY sort_at DESC, sort_id DESC LIMIT ${page.limit} OFFSET ${page.offset}) p) AS items`);
    const row = rowsOf<Row>(result)[0];
    if (!row?.known) return null;
    return { total: row.total, items: typeof row.items === 'string' ? (JSON.parse(row.items) as NotificationView[]) : row.items };
  }
}
