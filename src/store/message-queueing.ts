import { sql, type SQL } from 'drizzle-orm';
import type { MessageKind } from '../domain/lifecycle/member-messages.js';
import { at } from '../database/sql.js';

/**
 * Queuing a member's message inside the statement of the change it reports (docs/lifecycle.md):
 * the SQL fragments the stores that make such changes share. The queue itself, claimed and sent,
 * is notifications.store.ts's.
 */

/**
 * The platform a member's message goes to (docs/lifecycle.md), over `alias`'s row (columns
 * `project_id`, `plan_id`): that of the plan's targets, else the project's one bot. Whether the
 * project has a bot there is the caller's check. Confirmations, lifecycle messages and reminders
 * all choose by it.
 */
export const messagePlatform = (alias: string): SQL => {
  const row = sql.raw(alias);
  return sql`COALESCE(
    (SELECT t.platform FROM plan_targets pt JOIN targets t ON t.id = pt.target_id WHERE pt.plan_id = ${row}.plan_id ORDER BY t.platform LIMIT 1),
    (SELECT bot.platform FROM integrations bot WHERE bot.project_id = ${row}.project_id ORDER BY bot.platform LIMIT 1))`;
};

/**
 * `INSERT INTO notifications …` queuing message `kind` for each membership row of `source` (columns
 * `id`, `project_id`, `user_id`, `plan_id`), placed as a CTE in the statement of the change it
 * reports (docs/lifecycle.md), so the message commits with the change or not at all: on the
 * platform of the plan's targets, else the project's one bot; only where the project has that
 * bot, and not when the owner turned the message off (setting `messages`). `dedupeKey` (over `d`,
 * the source row) makes it one message: a change applied twice queues one. `endDate` (over `d`):
 * the end date it is written for, when the sender must check it is still the membership's.
 */
export function queueMessage(kind: MessageKind, source: string, now: Date | SQL, dedupeKey: SQL, endDate: SQL = sql`NULL::timestamptz`): SQL {
  const when = now instanceof Date ? at(now) : now;
  return sql`
    INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform, next_attempt_at, created_at, end_date)
    SELECT d.project_id, d.user_id, d.id, ${kind}, ${dedupeKey}, pf.platform, ${when}, ${when}, ${endDate}
    FROM ${sql.raw(source)} d
    CROSS JOIN LATERAL (
      SELECT ${messagePlatform('d')} AS platform
    ) pf
    WHERE EXISTS (SELECT 1 FROM integrations i WHERE i.project_id = d.project_id AND i.platform = pf.platform)
      AND NOT EXISTS (SELECT 1 FROM settings s WHERE s.project_id = d.project_id AND s.key = 'messages'
                      AND s.value #> ${`{${kind},enabled}`}::text[] = 'false'::jsonb)
    ON CONFLICT (project_id, dedupe_key) DO NOTHING`;
}

/** `<prefix>:<membership id>:<end date in ms>`: one message per membership and end date. */
export const perEndDate = (prefix: string) => sql`${prefix} || ':' || d.id::text || ':' || (extract(epoch FROM d.end_date) * 1000)::bigint::text`;
