import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { importMemberships } from '../../src/domain/memberships/membership-import.js';
import { rowsOf } from '../../src/database/db.js';
import { future, onPostgres, useHarness, userId, type Harness } from '../support/harness.js';

/**
 * The total of a whole project's membership list comes from membership_counts, which the triggers
 * of drizzle/functions.sql keep with every insert and delete (docs/memberships.md, "Listing and
 * filtering"); a list folds what they appended. Whatever wrote the rows, the total is what
 * count(*) says, and a filtered list still counts its matches.
 */

const counted = async (h: Harness, projectId: string) =>
  rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM memberships WHERE project_id = ${projectId}`))[0]!.n;
const countRows = async (h: Harness, projectId: string) =>
  rowsOf<{ folded: boolean; memberships: number }>(
    await h.database.db.execute(sql`SELECT folded, memberships::int AS memberships FROM membership_counts WHERE project_id = ${projectId} ORDER BY folded`),
  );
const total = async (h: Harness, projectId: string, filter: { status?: 'active' | 'expired' } = {}) => {
  const listed = await h.services.memberships.list(projectId, { limit: 1, offset: 0, ...filter });
  return listed.total;
};

describe(`membership counts on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  const h = useHarness();

  it('the total follows creates, set-based inserts, the import, deletes and a refused create; a list folds what was appended', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    expect(await total(h, t.projectId)).toBe(0);

    const ids = [userId(), userId(), userId()];
    const created = [];
    for (const id of ids) {
      const m = await h.services.memberships.create(t.projectId, { user_id: id, end_date: future(10).iso });
      if (!m.ok) throw m.error;
      created.push(m.value);
    }
    // A member who already has one: refused, nothing counted.
    expect((await h.services.memberships.create(t.projectId, { user_id: ids[0]!, end_date: future(10).iso })).ok).toBe(false);
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, end_date, status)
      SELECT ${t.projectId}, 'bulk' || g, now() - interval '1 day', 'expired' FROM generate_series(1, 250) AS g`);
    await h.services.memberships.create(other.projectId, { user_id: userId(), end_date: future(10).iso });
    expect((await countRows(h, t.projectId)).every((r) => !r.folded)).toBe(true);

    expect(await total(h, t.projectId)).toBe(253);
    expect(await countRows(h, t.projectId)).toStrictEqual([{ folded: true, memberships: 253 }]);
    // Filtered lists count their matches.
    expect(await total(h, t.projectId, { status: 'expired' })).toBe(250);
    expect(await total(h, t.projectId, { status: 'active' })).toBe(3);

    const lines = ['user_id,end_date', ...Array.from({ length: 40 }, (_, i) => `${700_000_000_000_000_000n + BigInt(i)},${future(5).iso}`), `${ids[1]},${future(5).iso}`];
    const report = await importMemberships({ chunks: h.container.stores.membershipImport, clock: h.container.clock }, t.projectId, Readable.from([lines.join('\n') + '\n']), { batchSize: 7 });
    expect(report.inserted).toBe(40);
    expect((await h.services.memberships.delete(t.projectId, created[2]!.membership_id)).ok).toBe(true);
    await h.database.db.execute(sql`DELETE FROM memberships WHERE project_id = ${t.projectId} AND user_id LIKE 'bulk1%'`);

    const expected = await counted(h, t.projectId);
    expect(expected).toBe(253 + 40 - 1 - 111);
    expect(await total(h, t.projectId)).toBe(expected);
    expect(await total(h, t.projectId)).toBe(expected);
    expect(await countRows(h, t.projectId)).toStrictEqual([{ folded: true, memberships: expected }]);
    expect(await total(h, other.projectId)).toBe(1);
  });

  it('a deleted project takes its counts with it, and deleting it fails nothing', async () => {
    const t = await h.tenant();
    await h.services.memberships.create(t.projectId, { user_id: userId(), end_date: future(10).iso });
    expect(await total(h, t.projectId)).toBe(1);
    await h.services.memberships.create(t.projectId, { user_id: userId(), end_date: future(10).iso });
    await h.database.db.execute(sql`DELETE FROM projects WHERE id = ${t.projectId}`);
    expect(await countRows(h, t.projectId)).toStrictEqual([]);
    expect(await counted(h, t.projectId)).toBe(0);
  });

  it('lists and creates at once: every total read afterwards is exact, and the appended rows fold into one', async () => {
    const t = await h.tenant();
    const writers = Array.from({ length: 4 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 15; i += 1) await h.services.memberships.create(t.projectId, { user_id: `w${w}-${i}`, end_date: future(10).iso });
      })(),
    );
    const readers = Array.from({ length: 3 }, async () => {
      const seen: number[] = [];
      for (let i = 0; i < 15; i += 1) seen.push(await total(h, t.projectId));
      return seen;
    });
    await Promise.all(writers);
    for (const seen of await Promise.all(readers)) {
      // Each reader's totals only grow (creates only), and never past what was written.
      expect(seen).toStrictEqual([...seen].sort((a, b) => a - b));
      expect(Math.max(...seen)).toBeLessThanOrEqual(60);
    }
    expect(await total(h, t.projectId)).toBe(60);
    expect(await counted(h, t.projectId)).toBe(60);
    expect(await countRows(h, t.projectId)).toStrictEqual([{ folded: true, memberships: 60 }]);
  });

  it("migration 0048's count gives what the triggers kept", async () => {
    const t = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, end_date) SELECT ${t.projectId}, 'm' || g, now() + interval '1 day' FROM generate_series(1, 120) AS g`);
    await h.database.db.execute(sql`DELETE FROM memberships WHERE project_id = ${t.projectId} AND user_id LIKE 'm1%'`);
    const kept = await total(h, t.projectId);
    expect(kept).toBe(120 - 32); // m1, m10-m19, m100-m120
    const backfill = readFileSync(new URL('../../drizzle/0048_membership_counts.sql', import.meta.url), 'utf8')
      .split('--> statement-breakpoint')
      .filter((s) => s.replace(/^--.*$/gm, '').trim().startsWith('INSERT INTO "membership_counts"'));
    expect(backfill).toHaveLength(1);
    // Only this project's rows: the other projects of the database keep what their triggers kept.
    await h.database.db.transaction(async (tx) => {
      await tx.execute(sql`CREATE TEMP TABLE keep ON COMMIT DROP AS SELECT * FROM membership_counts WHERE project_id <> ${t.projectId}`);
      await tx.execute(sql`DELETE FROM membership_counts`);
      await tx.execute(sql.raw(backfill[0]!));
      await tx.execute(sql`DELETE FROM membership_counts WHERE project_id <> ${t.projectId}`);
      await tx.execute(sql`INSERT INTO membership_counts SELECT * FROM keep`);
    });
    expect(await countRows(h, t.projectId)).toStrictEqual([{ folded: true, memberships: kept }]);
    expect(await total(h, t.projectId)).toBe(kept);
  });
});
