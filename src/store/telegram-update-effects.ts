import { sql, type SQL } from 'drizzle-orm';
import { outcomeData } from './access-completions.js';
import type { AccessError } from './access-worker.store.js';
import { at } from './bot-leases.store.js';
import { eventRows, type EventRows } from './outbox.js';
import { markWrites } from './wakeups.js';

/**
 * The database side of one update, written with its `handled_at` (each optional). Each re-checks
 * the row as it is then, so an update handled late, or a row that moved meanwhile, ends right.
 */
export interface UpdateEffects {
  /** A tenure link someone joined through: used (the first use kept), and revoked when `revoked`. */
  link?: { inviteLink: string; usedBy: string; revoked: boolean };
  /**
   * The user is in the chat: a granted row synced (`access.granted`, unless it was synced
   * already); a revoked one made pending, for the worker to remove them.
   */
  joined?: { targetId: string; userId: string };
  /** The member whose link someone else used: a row waiting for them pending again, for a fresh link. */
  relink?: { targetId: string; userId: string; error: AccessError };
  /** The user left or was removed: a granted synced row waits for them again. */
  left?: { targetId: string; userId: string; error: AccessError };
  /** The bot cannot act in the chat: the target unhealthy, its pending rows failed (`access.failed`). */
  targetFault?: { targetId: string; error: AccessError };
  /** The bot is an admin with the rights it needs again: the target healthy, its failed rows pending. */
  targetHealed?: { targetId: string };
}

/**
 * The writes of an update's effects (TelegramUpdatesStore.handled), as CTEs of the statement that
 * marks the update handled, and the events they announce. Each runs only when the update was
 * marked in that statement (its CTE `marked`); a target fault's failed rows take the failed
 * generation from its CTE `lease`.
 */
export function effectWrites(p: string, now: Date, e: UpdateEffects): { ctes: SQL[]; events: EventRows[] } {
  const go = sql`EXISTS (SELECT 1 FROM marked)`;
  const ctes: SQL[] = [];
  const events: EventRows[] = [];
  if (e.link) {
    ctes.push(sql`link AS (
      UPDATE telegram_invites SET
        used_at = coalesce(used_at, ${at(now)}),
        used_by = CASE WHEN used_at IS NULL THEN ${e.link.usedBy} ELSE used_by END,
        revoked_at = CASE WHEN ${e.link.revoked}::boolean THEN coalesce(revoked_at, ${at(now)}) ELSE revoked_at END
      WHERE invite_link = ${e.link.inviteLink} AND project_id = ${p} AND ${go})`);
  }
  if (e.joined) {
    const j = e.joined;
    // Granted: the member is in, as wanted. Revoked: in, though they should not be; the worker removes them.
    ctes.push(sql`joined AS (${markWrites(
      sql`UPDATE access a SET
            state = CASE WHEN a.desired = 'granted' THEN 'synced' WHEN a.state = 'failed' THEN 'failed' ELSE 'pending' END,
            applied = 'granted',
            last_error = CASE WHEN a.desired = 'granted' THEN NULL ELSE a.last_error END,
            failed_generation = CASE WHEN a.desired = 'granted' THEN NULL ELSE a.failed_generation END,
            synced_at = CASE WHEN a.desired = 'granted' THEN ${at(now)} ELSE a.synced_at END,
            attempts = CASE WHEN a.desired = 'revoked' AND a.state IN ('synced', 'waiting_for_member') THEN 0 ELSE a.attempts END,
            next_attempt_at = CASE WHEN a.desired = 'revoked' AND a.state IN ('synced', 'waiting_for_member') THEN ${at(now)} ELSE a.next_attempt_at END,
            updated_at = now()
          WHERE a.target_id = ${j.targetId} AND a.user_id = ${j.userId} AND a.project_id = ${p} AND ${go}
            AND NOT (a.desired = 'granted' AND a.state = 'synced' AND a.applied = 'granted')
            AND NOT (a.desired = 'revoked' AND a.applied = 'granted' AND a.state IN ('pending', 'failed'))
          RETURNING a.target_id, a.user_id, a.platform, a.desired`,
      ['access'],
    )})`);
    events.push(
      eventRows('access.granted', { projectId: sql`${p}::uuid`, data: outcomeData('j'), from: sql`FROM joined j WHERE j.desired = 'granted'` }),
    );
  }
  if (e.relink) {
    const r = e.relink;
    ctes.push(sql`relink AS (${markWrites(
      sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = ${at(now)}, last_error = ${JSON.stringify(r.error)}::jsonb, updated_at = now()
          WHERE a.target_id = ${r.targetId} AND a.user_id = ${r.userId} AND a.project_id = ${p} AND ${go}
            AND a.desired = 'granted' AND a.state = 'waiting_for_member'`,
      ['access'],
    )})`);
  }
  if (e.left) {
    const l = e.left;
    ctes.push(sql`gone AS (
      UPDATE access a SET state = 'waiting_for_member', applied = 'revoked', last_error = ${JSON.stringify(l.error)}::jsonb, updated_at = now()
      WHERE a.target_id = ${l.targetId} AND a.user_id = ${l.userId} AND a.project_id = ${p} AND ${go}
        AND a.desired = 'granted' AND a.state = 'synced')`);
  }
  if (e.targetFault) {
    const f = e.targetFault;
    const error = JSON.stringify(f.error);
    // The rows this statement writes otherwise are left to it (one row is written once per statement).
    const spared = [e.joined, e.relink].flatMap((x) => (x && x.targetId === f.targetId ? [x.userId] : []));
    ctes.push(sql`flagged AS (
      UPDATE targets SET health = 'unhealthy', health_error = ${error}::jsonb, updated_at = now()
      WHERE id = ${f.targetId} AND project_id = ${p} AND ${go})`);
    ctes.push(sql`cascaded AS (
      UPDATE access a SET state = 'failed', last_error = ${error}::jsonb, failed_generation = (SELECT generation FROM lease), updated_at = now()
      WHERE a.target_id = ${f.targetId} AND a.project_id = ${p} AND a.state = 'pending' AND ${go}
        AND a.user_id <> ALL(${sql.param(spared)}::text[])
      RETURNING a.target_id, a.user_id, a.platform, a.last_error)`);
    events.push(
      eventRows('access.failed', {
        projectId: sql`${p}::uuid`,
        data: { ...outcomeData('c'), error: sql<AccessError>`c.last_error` },
        from: sql`FROM cascaded c`,
      }),
    );
  }
  if (e.targetHealed) {
    ctes.push(sql`healed AS (
      UPDATE targets SET health = 'ok', health_error = NULL, updated_at = now()
      WHERE id = ${e.targetHealed.targetId} AND project_id = ${p} AND health <> 'ok' AND ${go}
      RETURNING id)`);
    // As an owner's update of the target does (TargetsStore.updateMany): what failed there is tried again.
    ctes.push(sql`retried AS (${markWrites(
      sql`UPDATE access a SET state = 'pending', attempts = 0, next_attempt_at = ${at(now)}, last_error = NULL, failed_generation = NULL, updated_at = now()
          FROM healed h WHERE a.target_id = h.id AND a.project_id = ${p} AND a.state = 'failed'`,
      ['access'],
    )})`);
  }
  return { ctes, events };
}
