import { sql } from 'drizzle-orm';
import type { AccessCompletionStatements, OutcomeWrite, TargetFault } from '../domain/access/access-completions.js';
import { failTargets, flagRefusedBot, recordOutcomes } from './access-completions.js';
import { rowsOf, type Db } from '../database/db.js';
import type { OnExpiry, Platform, TargetKind } from '../domain/targets/target.view.js';
import { type IntegrationKey } from './bot-leases.store.js';
import { at, iso } from '../database/sql.js';

/**
 * The access worker's SQL (src/access/README.md, docs/access-discord.md, "How tenure calls Discord"):
 * claims of due pending access rows, and the statements recording the outcomes of platform calls
 * (access-completions.ts; what each outcome writes is decided in
 * src/domain/access/access-completions.ts). Every write made on behalf of a bot is fenced by its
 * lease (src/store/bot-leases.store.ts): it happens only while `lease_owner` is still the writer and the
 * lease has not run out at `now` (the app clock), so a worker that stalled past its lease and was
 * taken over writes nothing.
 *
 * Claiming moves a row's `next_attempt_at` to the end of a claim lease and counts the attempt:
 * a worker that dies mid-call leaves its rows due again when the bot's lease could be taken over,
 * and `attempts` counts calls made for the current `desired` (the planner resets it).
 */

export type Desired = 'granted' | 'revoked';

/** A due pending row handed to the worker, as the call needs it. */
export interface ClaimedAccess {
  targetId: string;
  userId: string;
  /** `guild` | `role` (Discord); `group` | `channel` (Telegram). */
  kind: TargetKind;
  externalId: string;
  /** A role's guild; null for guilds and chats. */
  guildId: string | null;
  onExpiry: OnExpiry;
  desired: Desired;
  applied: Desired | null;
  /** This call's number for the current `desired` (1-based). */
  attempt: number;
  /** The member's membership (a Telegram invite is named after it); null once deleted. */
  membershipId: string | null;
  /** The member is banned from the project (a Telegram kick then leaves them banned in the chat). */
  banned: boolean;
}

export interface AccessError {
  code: string;
  message: string;
}

export { accessKey } from '../domain/access/access-completions.js';

export class AccessWorkerStore implements AccessCompletionStatements {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `limit` due pending rows of one bot's project while `owner` holds the bot's lease,
   * in a stable order: oldest due first (`access_pending_idx`), then by member and target, so a
   * burst written at one instant (a bulk extend) comes interleaved across targets and guilds.
   * At most `perTarget` per target, counting the rows the worker has in hand (`inHand`, which are
   * never returned again): a burst of one target does not fill the claim while other targets
   * (other guilds, with their own rate-limit buckets) wait. With `fill`, that cap only comes first:
   * room it leaves is filled with more rows of the same targets, in due order, so a burst on one
   * target is claimed a round at a time rather than a row per claim. Rows of an unhealthy target are left
   * (their calls would fail the same way), and so are rows in `skipGuilds` (guilds whose bucket is
   * empty now: their calls would only wait). The look-ahead is bounded: the first `limit × 8` due
   * rows in that order, so a claim costs the same however large the backlog.
   *
   * Each claimed row's `next_attempt_at` moves to `until` (a worker that dies leaves it due again
   * then, when its bot's lease can be taken over) and its `attempts` grows by one.
   */
  async claim(o: {
    owner: string;
    key: IntegrationKey;
    now: Date;
    until: Date;
    limit: number;
    perTarget?: number;
    /** Fill the room the `perTarget` cap leaves with more rows of the same targets. */
    fill?: boolean;
    inHand?: readonly { targetId: string; userId: string }[];
    skipGuilds?: readonly string[];
  }): Promise<ClaimedAccess[]> {
    if (o.limit <= 0) return [];
    const inHand = o.inHand ?? [];
    const perTarget = o.perTarget ?? o.limit;
    const held = new Map<string, number>();
    for (const r of inHand) held.set(r.targetId, (held.get(r.targetId) ?? 0) + 1);
    const result = await this.db.execute(sql`
      WITH lease AS (
        SELECT 1 FROM integrations
        WHERE project_id = ${o.key.projectId} AND platform = ${o.key.platform}
          AND lease_owner = ${o.owner} AND lease_expires_at > ${at(o.now)} AND health = 'ok'
      ), held AS (
        SELECT * FROM unnest(${sql.param([...held.keys()])}::uuid[], ${sql.param([...held.values()])}::int[]) AS h(target_id, n)
      ), ahead AS (
        SELECT a.target_id, a.user_id, a.next_attempt_at, coalesce(a.guild_id, a.external_id) AS guild FROM access a
        WHERE a.project_id = ${o.key.projectId} AND a.state = 'pending' AND a.next_attempt_at <= ${at(o.now)}
          AND a.platform = ${o.key.platform} AND EXISTS (SELECT 1 FROM lease)
        ORDER BY a.next_attempt_at, a.user_id, a.target_id
        LIMIT ${o.limit * 8 + perTarget}
      ), ranked AS (
        SELECT d.*, row_number() OVER (PARTITION BY d.target_id ORDER BY d.next_attempt_at, d.user_id) AS rn
        FROM ahead d
        WHERE d.guild <> ALL(${sql.param([...(o.skipGuilds ?? [])])}::text[])
          AND NOT EXISTS (SELECT 1 FROM targets t WHERE t.id = d.target_id AND t.health = 'unhealthy')
          AND NOT EXISTS (
            SELECT 1 FROM unnest(${sql.param(inHand.map((e) => e.targetId))}::uuid[], ${sql.param(inHand.map((e) => e.userId))}::text[]) AS x(target_id, user_id)
            WHERE x.target_id = d.target_id AND x.user_id = d.user_id)
      ), picked AS (
        SELECT r.target_id, r.user_id, r.next_attempt_at FROM ranked r LEFT JOIN held h ON h.target_id = r.target_id
        ${
          o.fill
            ? sql`ORDER BY (r.rn > ${perTarget}::int - coalesce(h.n, 0)), r.next_attempt_at, r.user_id, r.target_id`
            : sql`WHERE r.rn <= ${perTarget}::int - coalesce(h.n, 0) ORDER BY r.next_attempt_at, r.user_id, r.target_id`
        }
        LIMIT ${o.limit}
      ), locked AS (
        SELECT a.target_id, a.user_id, p.next_attempt_at FROM access a JOIN picked p ON p.target_id = a.target_id AND p.user_id = a.user_id
        WHERE a.state = 'pending' AND a.next_attempt_at <= ${at(o.now)}
        FOR UPDATE OF a SKIP LOCKED
      ), claimed AS (
        UPDATE access a SET attempts = a.attempts + 1, next_attempt_at = ${at(o.until)}, updated_at = now()
        FROM locked d
        WHERE a.target_id = d.target_id AND a.user_id = d.user_id
        RETURNING a.target_id, a.user_id, a.kind, a.external_id, a.guild_id, a.on_expiry, a.desired, a.applied, a.attempts, d.next_attempt_at AS due_at
      )
      SELECT c.target_id, c.user_id, c.kind, c.external_id, c.guild_id, c.on_expiry, c.desired, c.applied, c.attempts,
             (SELECT m.id FROM memberships m WHERE m.project_id = ${o.key.projectId} AND m.user_id = c.user_id) AS membership_id,
             EXISTS (SELECT 1 FROM bans b WHERE b.project_id = ${o.key.projectId} AND b.user_id = c.user_id) AS banned
      FROM claimed c
      ORDER BY c.due_at, c.user_id, c.target_id`);
    return rowsOf<{
      target_id: string;
      user_id: string;
      kind: TargetKind;
      external_id: string;
      guild_id: string | null;
      on_expiry: OnExpiry;
      desired: Desired;
      applied: Desired | null;
      attempts: number;
      membership_id: string | null;
      banned: boolean;
    }>(result).map((r) => ({
      targetId: r.target_id,
      userId: r.user_id,
      kind: r.kind,
      externalId: r.external_id,
      guildId: r.guild_id,
      onExpiry: r.on_expiry,
      desired: r.desired,
      applied: r.applied,
      attempt: r.attempts,
      membershipId: r.membership_id,
      banned: r.banned,
    }));
  }

  /** A batch of one bot's outcomes written to their rows, with their events, under its lease (access-completions.ts). */
  recordOutcomes(owner: string, key: IntegrationKey, now: Date, writes: readonly OutcomeWrite[]): Promise<{ generation: number | null; recorded: string[] }> {
    return recordOutcomes(this.db, owner, key, now, writes);
  }

  /** Faulted targets flagged unhealthy, their pending rows but `spared` failed, with events (access-completions.ts). */
  failTargets(projectId: string, generation: number, faults: readonly TargetFault[], spared: readonly string[]): Promise<{ flagged: string[]; cascaded: number }> {
    return failTargets(this.db, projectId, generation, faults, spared);
  }

  /** The bot flagged unhealthy after a refused token, under its lease (access-completions.ts). */
  flagRefusedBot(owner: string, key: IntegrationKey, now: Date, error: AccessError): Promise<void> {
    return flagRefusedBot(this.db, owner, key, now, error);
  }

  /** The earliest `next_attempt_at` of a pending row of a bot `owner` holds (null: none), for the worker's sleep. */
  async nextDueAt(owner: string, platform: Platform): Promise<Date | null> {
    const result = await this.db.execute(sql`
      SELECT ${iso(sql`min(a.next_attempt_at)`)} AS at FROM integrations i
      JOIN LATERAL (
        SELECT next_attempt_at FROM access a
        WHERE a.project_id = i.project_id AND a.state = 'pending' AND a.platform = i.platform
        ORDER BY next_attempt_at LIMIT 1
      ) a ON true
      WHERE i.platform = ${platform} AND i.lease_owner = ${owner}`);
    const next = rowsOf<{ at: string | null }>(result)[0]?.at;
    return next ? new Date(next) : null;
  }

  /** Pending rows (due or waiting for a retry), and how long the oldest due one has waited, for /metrics. */
  async queueStats(): Promise<{ depth: number; oldestDueAgeSeconds: number }> {
    const result = await this.db.execute(sql`
      SELECT count(*)::int AS depth,
             COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now())), 0)::float8 AS age
      FROM access
      WHERE state = 'pending'`);
    const row = rowsOf<{ depth: number | string; age: number | string }>(result)[0];
    return { depth: Number(row?.depth ?? 0), oldestDueAgeSeconds: Math.max(0, Number(row?.age ?? 0)) };
  }
}
