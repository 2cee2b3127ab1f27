import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { DEFAULT_SETTINGS } from '../domain/settings/settings.catalogue.js';
import { offsetSeconds, REMINDER_LANES } from '../domain/lifecycle/reminder-rules.js';
import { at, iso } from '../database/sql.js';
import { insertEvent } from './outbox.js';
import { membershipJson, withPlanPerRow } from './memberships.store.js';
import { messagePlatform } from './message-queueing.js';

/**
 * The reminders' scan (docs/lifecycle.md): one statement per batch writes, for the memberships
 * (each by its plan's `reminder_offsets` when the plan has its own, else its project's setting)
 * whose reminder instant (end date − offset) the clock has passed, one `reminders` row each, the
 * `membership.expiring` event and (for the nearest offset) the bot's message to send (a `notifications` row of kind
 * `reminder`, sent by the confirmations job).
 *
 * One cursor per offset and lane (`reminder_cursors`): the last (end date, id) the scan has passed
 * in that lane, so a pass reads only the memberships whose instant fell since the last one, an
 * index range scan of active rows ending in (cursor, now + offset], however long tenure was down. A lane is a fixed share of the memberships
 * (`REMINDER_LANES` of them, by the last byte of the id), read through its own range of
 * `memberships_active_lane_end_idx` (lane, end_date, id): the lanes of an offset are written side
 * by side, each batch its own transaction, when many instants come at once. The cursor row is
 * locked (`FOR UPDATE SKIP LOCKED`) by the batch that advances it: another worker's pass skips that
 * lane meanwhile, and the primary key (membership, end date, offset) of `reminders` makes a second
 * write of one reminder nothing.
 *
 * An extension moves the end date past the cursor, so the membership is met again with its new
 * end date (re-armed); a reminder row of the old date still unsent is dropped by the sender.
 * Several offsets due at once (after an outage): each still writes its event (the owner's backend
 * hears of every offset reached), but only the nearest is written `sent` with a message; any
 * further one is `skipped`: the member is not sent several reminders in the same minute.
 */

/** The SQL twin of `offsetSeconds` for a stored offset (the settings' validator lets only `<n>d` and `<n>h` in). */
const offsetSecondsSql = (x: SQL): SQL<number> =>
  sql<number>`(left(${x}, -1)::int * CASE right(${x}, 1) WHEN 'd' THEN 86400 ELSE 3600 END)`;

const DEFAULT_OFFSETS = JSON.stringify(DEFAULT_SETTINGS.reminder_offsets);
const NO_ID = '00000000-0000-0000-0000-000000000000';

/** A membership's lane; written with the lane count inline, as `memberships_active_lane_end_idx` is, so the scan uses that index. */
const laneOf = (id: SQL): SQL<number> => sql<number>`(get_byte(uuid_send(${id}), 15) % ${sql.raw(String(REMINDER_LANES))})`;

export class RemindersStore {
  constructor(private readonly db: Db) {}

  /**
   * Every offset some project or plan uses (the setting, a plan's own `reminder_offsets`, or the
   * default) or once used, each with a cursor.
   * A new cursor starts at now + offset: an offset applies to the instants after it is first used,
   * not to memberships already inside its window. Cursors of offsets no project uses any more keep
   * moving, so a project taking one up again is not sent the reminders of the time between.
   */
  async offsets(now: Date): Promise<string[]> {
    const result = await this.db.execute(sql`
      SELECT DISTINCT x AS o FROM settings s, jsonb_array_elements_text(s.value) x WHERE s.key = 'reminder_offsets'
      UNION SELECT x FROM plans p, jsonb_array_elements_text(p.reminder_offsets) x WHERE p.reminder_offsets IS NOT NULL
      UNION SELECT jsonb_array_elements_text(${DEFAULT_OFFSETS}::jsonb)
      UNION SELECT reminder_offset FROM reminder_cursors`);
    const offsets = rowsOf<{ o: string }>(result).map((r) => r.o).filter((o) => offsetSeconds(o) !== null);
    if (offsets.length > 0) {
      await this.db.execute(sql`
        INSERT INTO reminder_cursors (reminder_offset, lane, end_date, membership_id)
        SELECT o, lane, ${at(now)} + ${offsetSecondsSql(sql`o`)} * interval '1 second', ${NO_ID}::uuid
        FROM unnest(${sql.param(offsets)}::text[]) o, generate_series(0, ${REMINDER_LANES - 1}) lane
        ON CONFLICT DO NOTHING`);
    }
    return offsets.sort((a, b) => offsetSeconds(b)! - offsetSeconds(a)!);
  }

  /**
   * One batch of offset `offset` in lane `lane` (0 to REMINDER_LANES − 1): up to `limit` memberships
   * of the lane past its cursor whose instant has come, the cursor moved past them. Returns how
   * many were scanned (a short batch: none left) and how many reminders were written.
   */
  async writeDue(offset: string, lane: number, now: Date, limit: number): Promise<{ scanned: number; written: number }> {
    const seconds = offsetSeconds(offset);
    if (seconds === null) return { scanned: 0, written: 0 };
    const horizon = new Date(now.getTime() + seconds * 1000);
    const result = await this.db.execute(sql`
      WITH cur AS (
        SELECT end_date, membership_id FROM reminder_cursors WHERE reminder_offset = ${offset} AND lane = ${lane} FOR UPDATE SKIP LOCKED
      ), cand AS (
        SELECT m.* FROM cur, memberships m
        WHERE m.status = 'active' AND m.end_date > ${at(now)} AND m.end_date <= ${at(horizon)}
          AND (m.end_date, m.id) > (cur.end_date, cur.membership_id) AND ${laneOf(sql`m.id`)} = ${lane}
        ORDER BY m.end_date, m.id
        LIMIT ${limit}
      ), conf AS (
        -- What every row of one project and plan shares, looked up once per (project, plan) of the
        -- batch instead of once per row: the offsets that apply (the plan's own, else the project's
        -- setting, else the default), the nearest of them before this one (a row already inside that
        -- nearer window is 'skipped'), and the platform of the bot that sends the message.
        SELECT k.project_id, k.plan_key, o.offsets,
               (SELECT max(${offsetSecondsSql(sql`x`)}) FROM jsonb_array_elements_text(o.offsets) x
                WHERE ${offsetSecondsSql(sql`x`)} < ${seconds}) AS nearer_seconds,
               pf.platform
        FROM (SELECT DISTINCT project_id, plan_id, COALESCE(plan_id, ${NO_ID}::uuid) AS plan_key FROM cand) k
        CROSS JOIN LATERAL (
          SELECT COALESCE(
            (SELECT p.reminder_offsets FROM plans p WHERE p.id = k.plan_id),
            (SELECT s.value FROM settings s WHERE s.project_id = k.project_id AND s.key = 'reminder_offsets'),
            ${DEFAULT_OFFSETS}::jsonb) AS offsets
        ) o
        CROSS JOIN LATERAL (
          SELECT (SELECT i.platform FROM integrations i
                  WHERE i.project_id = k.project_id
                    AND i.platform = ${messagePlatform('k')}) AS platform
        ) pf
        WHERE o.offsets @> to_jsonb(${offset}::text)
      ), judged AS (
        SELECT c.id, c.end_date, c.project_id, f.nearer_seconds FROM cand c
        JOIN conf f ON f.project_id = c.project_id AND f.plan_key = COALESCE(c.plan_id, ${NO_ID}::uuid)
      ), ins AS (
        INSERT INTO reminders (membership_id, end_date, reminder_offset, project_id, state, created_at)
        SELECT j.id, j.end_date, ${offset}, j.project_id,
               CASE WHEN j.end_date <= ${at(now)}::timestamptz + j.nearer_seconds * interval '1 second'
                    THEN 'skipped' ELSE 'sent' END,
               ${at(now)}
        FROM judged j
        ON CONFLICT DO NOTHING
        RETURNING membership_id, state
      ), reached AS (
        SELECT c.* FROM cand c JOIN ins ON ins.membership_id = c.id
      ), due AS (
        SELECT c.* FROM cand c JOIN ins ON ins.membership_id = c.id AND ins.state = 'sent'
      ), full_row AS (${withPlanPerRow('reached')}), ev AS (
        ${insertEvent('membership.expiring', {
          projectId: sql`project_id`,
          data: { membership: membershipJson('full_row', now), offset: sql<string>`${offset}::text`, end_date: iso(sql`full_row.end_date`) },
          from: sql`FROM full_row`,
        })}
      ), queued AS (
        INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform, next_attempt_at, created_at, end_date, reminder_offset)
        SELECT d.project_id, d.user_id, d.id, 'reminder',
               'reminder:' || d.id::text || ':' || (extract(epoch FROM d.end_date) * 1000)::bigint::text || ':' || ${offset},
               f.platform, ${at(now)}, ${at(now)}, d.end_date, ${offset}
        FROM due d
        JOIN conf f ON f.project_id = d.project_id AND f.plan_key = COALESCE(d.plan_id, ${NO_ID}::uuid)
        WHERE f.platform IS NOT NULL
        ON CONFLICT (project_id, dedupe_key) DO NOTHING
      ), moved AS (
        UPDATE reminder_cursors r SET end_date = last.end_date, membership_id = last.id
        FROM (SELECT end_date, id FROM cand ORDER BY end_date DESC, id DESC LIMIT 1) last
        WHERE r.reminder_offset = ${offset} AND r.lane = ${lane}
      )
      SELECT (SELECT count(*) FROM cand)::int AS scanned, (SELECT count(*) FROM reached)::int AS written`);
    const row = rowsOf<{ scanned: number; written: number }>(result)[0];
    return { scanned: row?.scanned ?? 0, written: row?.written ?? 0 };
  }
}
