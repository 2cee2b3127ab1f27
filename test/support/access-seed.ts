import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Platform } from '../../src/domain/targets/target.view.js';
import { rowsOf } from '../../src/database/db.js';
import { markWrites } from '../../src/database/wakeups.js';
import type { Harness } from './harness.js';

/**
 * Direct inserts and looks at the access tables, for the worker's tests (storage and in-process):
 * a bot connection, Discord targets, access rows in any state, as the planner and the
 * integrations service would leave them. The API's own tests go through the routes instead.
 */

const isoCol = (column: string) => sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export interface SeededIntegration {
  projectId: string;
  botId: string;
}

/** A connected Discord bot (its token sealed by the caller: the worker opens it with the secret box). */
export async function insertIntegration(
  h: Harness,
  projectId: string,
  o: { botId?: string; botTokenSealed?: string; platform?: Platform; health?: 'ok' | 'unhealthy'; reconciledAt?: Date } = {},
): Promise<SeededIntegration> {
  const botId = o.botId ?? String(900_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
  await h.database.db.execute(sql`
    INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, health, reconciled_at)
    VALUES (${projectId}, ${o.platform ?? 'discord'}, ${o.botTokenSealed ?? 'sealed'}, ${botId}, 'tenure-test-bot', ${o.health ?? 'ok'},
            ${o.reconciledAt ? o.reconciledAt.toISOString() : null}::timestamptz)`);
  return { projectId, botId };
}

export interface SeededTarget {
  id: string;
  kind: 'guild' | 'role';
  externalId: string;
  /** A role's guild id (the parent's external id); the guild's own for a guild. */
  guildId: string;
  onExpiry: string;
}

/** A Discord guild target. */
export async function insertGuild(h: Harness, projectId: string, o: { externalId?: string; onExpiry?: 'kick' | 'none' } = {}): Promise<SeededTarget> {
  const id = randomUUID();
  const externalId = o.externalId ?? snowflake();
  await h.database.db.execute(sql`
    INSERT INTO targets (id, project_id, name, platform, kind, external_id, on_expiry)
    VALUES (${id}, ${projectId}, ${`guild ${externalId}`}, 'discord', 'guild', ${externalId}, ${o.onExpiry ?? null})`);
  return { id, kind: 'guild', externalId, guildId: externalId, onExpiry: o.onExpiry ?? 'none' };
}

/** A Discord role target under `guild`. */
export async function insertRole(
  h: Harness,
  projectId: string,
  guild: SeededTarget,
  o: { externalId?: string; onExpiry?: 'remove_role' | 'none' } = {},
): Promise<SeededTarget> {
  const id = randomUUID();
  const externalId = o.externalId ?? snowflake();
  await h.database.db.execute(sql`
    INSERT INTO targets (id, project_id, name, platform, kind, external_id, parent_target_id, on_expiry)
    VALUES (${id}, ${projectId}, ${`role ${externalId}`}, 'discord', 'role', ${externalId}, ${guild.id}, ${o.onExpiry ?? null})`);
  return { id, kind: 'role', externalId, guildId: guild.externalId, onExpiry: o.onExpiry ?? 'remove_role' };
}

export interface AccessSeed {
  userId: string;
  desired: 'granted' | 'revoked';
  applied?: 'granted' | 'revoked' | null;
  state?: 'pending' | 'synced' | 'waiting_for_member' | 'failed';
  nextAttemptAt?: Date;
}

/**
 * Access rows of one target (one INSERT, however many). Pending and due now (the database's clock)
 * unless told. Marked as the planner marks its writes: the commit wakes the access workers.
 */
export async function insertAccess(h: Harness, projectId: string, target: SeededTarget, rows: readonly AccessSeed[]): Promise<void> {
  await insertAccessRows(h, projectId, { ...target, platform: 'discord', guildId: target.kind === 'role' ? target.guildId : null }, rows);
}

/** Access rows of one target of either platform, as insertAccess (a Discord target) and insertChatAccess (a Telegram chat) write them. */
export async function insertAccessRows(
  h: Harness,
  projectId: string,
  target: { id: string; platform: Platform; kind: string; externalId: string; guildId: string | null; onExpiry: string },
  rows: readonly AccessSeed[],
): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(pick: (r: AccessSeed) => T) => sql.param(rows.map(pick));
  await h.database.db.execute(markWrites(sql`
    INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, guild_id, on_expiry, desired, applied, state, next_attempt_at)
    SELECT ${projectId}, ${target.id}, r.user_id, ${target.platform}, ${target.kind}, ${target.externalId},
           ${target.guildId}, ${target.onExpiry}, r.desired, r.applied, r.state, coalesce(r.next_attempt_at, now())
    FROM unnest(${col((r) => r.userId)}::text[], ${col((r) => r.desired)}::text[], ${col((r) => r.applied ?? null)}::text[],
                ${col((r) => r.state ?? 'pending')}::text[], ${col((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[])
         AS r(user_id, desired, applied, state, next_attempt_at)`, ['access']));
}

export interface AccessRow {
  target_id: string;
  user_id: string;
  desired: string;
  applied: string | null;
  state: string;
  last_error: { code: string; message: string } | null;
  attempts: number;
  next_attempt_at: string;
  synced_at: string | null;
  failed_generation: number | null;
}

/** A project's access rows, by target then user. */
export async function accessRows(h: Harness, projectId: string): Promise<AccessRow[]> {
  return rowsOf<AccessRow>(
    await h.database.db.execute(sql`
      SELECT target_id, user_id, desired, applied, state, last_error, attempts, ${isoCol('next_attempt_at')} AS next_attempt_at,
             ${isoCol('synced_at')} AS synced_at, failed_generation
      FROM access WHERE project_id = ${projectId} ORDER BY target_id, user_id`),
  );
}

export interface IntegrationRow {
  health: string;
  last_error: { code: string; message: string } | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  generation: number;
}

export async function integrationRow(h: Harness, projectId: string, platform = 'discord'): Promise<IntegrationRow | undefined> {
  return rowsOf<IntegrationRow>(
    await h.database.db.execute(sql`
      SELECT health, last_error, lease_owner, ${isoCol('lease_expires_at')} AS lease_expires_at, generation
      FROM integrations WHERE project_id = ${projectId} AND platform = ${platform}`),
  )[0];
}

export async function targetHealth(h: Harness, targetId: string): Promise<{ health: string; health_error: { code: string; message: string } | null }> {
  return rowsOf<{ health: string; health_error: { code: string; message: string } | null }>(
    await h.database.db.execute(sql`SELECT health, health_error FROM targets WHERE id = ${targetId}`),
  )[0]!;
}

/** A random Discord-style id. */
export const snowflake = (): string => String(100_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
