import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { stillWaiting, withConnections } from '../support/connections.js';
import { future, onPostgres, useHarness, userId, type Tenant } from '../support/harness.js';

/**
 * Events, memberships and users have no foreign key to their project (migration 0020): statement
 * triggers lock the project row once per statement instead, and deleting a project deletes them
 * (drizzle/functions.sql, tenure_hold_projects, tenure_project_cascade). What the keys guaranteed
 * still holds: no row names a project that does not exist, and none outlives its project.
 */

const h = useHarness();

const inserts = (projectId: string) => ({
  events: `INSERT INTO events (project_id, type, data) VALUES ('${projectId}', 'membership.extended', '{}'::jsonb)`,
  memberships: `INSERT INTO memberships (project_id, user_id, end_date) VALUES ('${projectId}', '${userId()}', '${future().iso}')`,
  users: `INSERT INTO users (project_id, user_id) VALUES ('${projectId}', '${userId()}')`,
});

async function rowsOfProject(projectId: string): Promise<Record<'events' | 'memberships' | 'users', number>> {
  const [row] = rowsOf<{ events: number; memberships: number; users: number }>(
    await h.database.db.execute(sql`
      SELECT (SELECT count(*)::int FROM events WHERE project_id = ${projectId}) AS events,
             (SELECT count(*)::int FROM memberships WHERE project_id = ${projectId}) AS memberships,
             (SELECT count(*)::int FROM users WHERE project_id = ${projectId}) AS users`),
  );
  return row!;
}

async function sqlState(statement: Promise<unknown>): Promise<string | undefined> {
  try {
    await statement;
  } catch (err) {
    // drizzle wraps the driver's error; the SQLSTATE is on the cause (PostgreSQL) or the error (PGlite).
    const e = err as { code?: string; cause?: { code?: string } };
    return e.cause?.code ?? e.code;
  }
  return undefined;
}

async function write(t: Tenant): Promise<void> {
  for (const statement of Object.values(inserts(t.projectId))) await h.database.db.execute(sql.raw(statement));
}

describe(`a project's rows without foreign keys (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('refuses an event, membership or user of a project that does not exist, as the foreign key did, and writes nothing', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const [table, statement] of Object.entries(inserts(missing))) {
      expect(await sqlState(h.database.db.execute(sql.raw(statement))), table).toBe('23503');
    }
    // A statement of many rows fails whole when one of them names no project.
    const t = await h.tenant();
    const mixed = sql.raw(`INSERT INTO users (project_id, user_id) VALUES ('${t.projectId}', '${userId()}'), ('${missing}', '${userId()}')`);
    expect(await sqlState(h.database.db.execute(mixed))).toBe('23503');
    expect(await rowsOfProject(missing)).toStrictEqual({ events: 0, memberships: 0, users: 0 });
    expect(await rowsOfProject(t.projectId)).toStrictEqual({ events: 0, memberships: 0, users: 0 });
  });

  it('deletes a project’s events, memberships and users with it, and nothing of another project', async () => {
    const [gone, kept] = [await h.tenant(), await h.tenant()];
    await write(gone);
    await write(kept);
    expect(await rowsOfProject(gone.projectId)).toStrictEqual({ events: 1, memberships: 1, users: 1 });
    await h.database.db.execute(sql`DELETE FROM projects WHERE id = ${gone.projectId}`);
    expect(await rowsOfProject(gone.projectId)).toStrictEqual({ events: 0, memberships: 0, users: 0 });
    expect(await rowsOfProject(kept.projectId)).toStrictEqual({ events: 1, memberships: 1, users: 1 });
  });

  it('a delete waits for the transactions writing the project, then deletes what they wrote; a writer after it fails', async () => {
    const t = await h.tenant();
    if (!h.databaseUrl) {
      // Embedded storage has one connection: a writer's transaction and the delete take turns.
      await h.database.db.transaction(async (tx) => {
        for (const statement of Object.values(inserts(t.projectId))) await tx.execute(sql.raw(statement));
      });
      await h.database.db.execute(sql`DELETE FROM projects WHERE id = ${t.projectId}`);
      expect(await sqlState(h.database.db.execute(sql.raw(inserts(t.projectId).memberships)))).toBe('23503');
      expect(await rowsOfProject(t.projectId)).toStrictEqual({ events: 0, memberships: 0, users: 0 });
      return;
    }
    await withConnections(h.databaseUrl, 3, async (clients) => {
      const [writer, deleter, late] = clients as [pg.Client, pg.Client, pg.Client];
      await writer.query('BEGIN');
      for (const statement of Object.values(inserts(t.projectId))) await writer.query(statement);
      await deleter.query('BEGIN');
      const deleting = deleter.query('DELETE FROM projects WHERE id = $1', [t.projectId]);
      expect(await stillWaiting(deleting)).toBe('waiting');
      await writer.query('COMMIT');
      await deleting;
      // The delete is done and not yet committed: a writer now waits for it, then finds no project.
      const lateWrite = late.query(inserts(t.projectId).memberships).then(
        () => 'written',
        (err: { code?: string }) => err.code,
      );
      expect(await stillWaiting(lateWrite)).toBe('waiting');
      await deleter.query('COMMIT');
      expect(await lateWrite).toBe('23503');
    });
    expect(await rowsOfProject(t.projectId)).toStrictEqual({ events: 0, memberships: 0, users: 0 });
  });
});
