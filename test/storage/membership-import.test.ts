import { Readable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BATCH, EMBEDDED_BATCH, importMemberships, type ImportChunks } from '../../src/domain/memberships/membership-import.js';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, eventRows, membershipRows } from '../support/api.js';
import { future, onPostgres, userId } from '../support/harness.js';
import { createHook, createWebhookHarness, deliveryRows, webhookBodyOf, type WebhookHarness } from '../support/webhook-harness.js';

/**
 * The CSV import where storage makes the difference: each chunk is COPYed into a staging table
 * (COPY FROM STDIN on PostgreSQL, FROM '/dev/blob' on PGlite) and written by one statement, with
 * several chunks in flight on PostgreSQL. The report, the rows, the users, the events and their
 * fan-out must come out as the row-by-row rules say, whatever the chunking.
 */

const csv = (lines: string[]) => Readable.from([lines.join('\n') + '\n']);

describe(`membership import on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  let w: WebhookHarness;
  beforeAll(async () => {
    w = await createWebhookHarness();
  });
  afterAll(() => w.close());
  const store = () => w.h.container.stores.membershipImport;
  /** The import as the CLI runs it: the container's chunks and clock. */
  const deps = (chunks: ImportChunks = store()) => ({ chunks, clock: w.h.container.clock });

  it('imports in chunks: same rejections, users, statuses, one event per membership equal to the API view, fanned out', async () => {
    const t = await w.tenant();
    await createHook(t, 'http://127.0.0.1:9/import');
    const [a, b, c, d, e, banned, member] = Array.from({ length: 7 }, userId);
    await t.request({ method: 'PUT', url: `${t.base}/ban/${banned}`, payload: {} });
    await createMembership(t, { userId: member });
    const { ms, iso } = future(30);
    const past = '2001-01-01T00:00:00.000Z';
    const lines = [
      'user_id,end_date', // 1
      `${a},${ms}`, // 2
      `${b},${iso}`, // 3
      `abc,${ms}`, // 4: bad id
      `${banned},${ms}`, // 5: banned
      `${a},${ms}`, // 6: duplicate of line 2
      `${c},not-a-date`, // 7
      `${member},${ms}`, // 8: already a member
      `${d},${past}`, // 9: expired
      `${e}`, // 10: one column
      `${c},${iso}`, // 11
    ];
    const progress: number[] = [];
    const report = await importMemberships(deps(), t.projectId, csv(lines), { batchSize: 2, onProgress: (_rows, n) => progress.push(n) });

    expect(report.inserted).toBe(4);
    expect(report.rejections.map((r) => [r.line, r.user_id])).toStrictEqual([
      [4, 'abc'],
      [5, banned],
      [6, a],
      [7, c],
      [8, member],
      [10, e],
    ]);
    expect(report.rejections[1]!.reason).toBe('user already has a membership in this project, or is banned from it');
    expect(report.rejections[4]!.reason).toBe('user already has a membership in this project, or is banned from it');
    expect(report.rejections[2]!.reason).toBe('duplicate user_id (first on line 2)');
    expect(report.rejected).toBe(6);
    expect(progress.at(-1)).toBe(4);

    const rows = (await membershipRows(w.h, t.projectId)).filter((m) => m.user_id !== member);
    expect(rows.map((m) => [m.user_id, m.end_date, m.status]).sort()).toStrictEqual(
      [
        [a, iso, 'active'],
        [b, iso, 'active'],
        [c, iso, 'active'],
        [d, past, 'expired'],
      ].sort(),
    );
    const users = rowsOf<{ user_id: string }>(
      await w.h.database.db.execute(sql`SELECT user_id FROM users WHERE project_id = ${t.projectId} ORDER BY user_id`),
    );
    expect(users.map((u) => u.user_id)).toStrictEqual([a, b, c, d, member].sort());

    // One membership.created per imported membership, carrying exactly what the API shows.
    const created = (await eventRows(w.h, t.projectId)).filter((ev) => ev.type === 'membership.created').slice(1);
    expect(created).toHaveLength(4);
    for (const ev of created) {
      const m = ev.data.membership as { membership_id: string };
      const api = (await t.request({ method: 'GET', url: `${t.base}/memberships/${m.membership_id}` })).json().data;
      expect(ev.data, JSON.stringify(api)).toStrictEqual({ membership: api });
    }
    const deliveries = (await deliveryRows(w.h, t.projectId)).filter((r) => r.event_type === 'membership.created');
    expect(deliveries).toHaveLength(5);
    // The imported memberships and their events carry time-ordered ids (UUIDv7: ordered-ids.ts);
    // the membership created through the API keeps a random one (version 4).
    const version = (id: string) => id[14];
    expect(rows.map((m) => version(m.id))).toStrictEqual(['7', '7', '7', '7']);
    expect(deliveries.map((d) => version(d.event_id))).toStrictEqual(['4', '7', '7', '7', '7']);
    const body = JSON.parse(await webhookBodyOf(w.h, deliveries.at(-1)!.event_id));
    expect(body.type).toBe('membership.created');
  });

  it('shows a known user’s stored names in the event of an imported membership', async () => {
    const t = await w.tenant();
    const user = userId();
    const res = await t.request({
      method: 'POST',
      url: `${t.base}/memberships`,
      payload: { user_id: user, end_date: future(5).iso, user_name: { first_name: 'Ada', username: 'ada' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const del = await t.request({ method: 'DELETE', url: `${t.base}/memberships/${res.json().data.membership_id}` });
    expect(del.statusCode, del.body).toBeLessThan(300);

    const report = await importMemberships(deps(), t.projectId, csv([`${user},${future(9).ms}`]));
    expect(report).toMatchObject({ inserted: 1, rejected: 0 });
    const created = (await eventRows(w.h, t.projectId)).filter((ev) => ev.type === 'membership.created').at(-1)!;
    expect((created.data.membership as { user_name: unknown }).user_name).toStrictEqual({ first_name: 'Ada', username: 'ada' });
  });

  it('user_name and start_date: the name stored as the API stores user_name.first_name, the start as given, bad ones rejected with their line', async () => {
    const t = await w.tenant();
    const [named, known, keeps, started, late, badStart, longName] = [userId(), userId(), userId(), userId(), userId(), userId(), userId()];
    // Two users known from memberships made and deleted through the API, with their names.
    for (const user of [known, keeps]) {
      const res = await t.request({
        method: 'POST',
        url: `${t.base}/memberships`,
        payload: { user_id: user, end_date: future(5).iso, user_name: { first_name: 'Old', username: 'old_handle' } },
      });
      expect(res.statusCode, res.body).toBe(201);
      const del = await t.request({ method: 'DELETE', url: `${t.base}/memberships/${res.json().data.membership_id}` });
      expect(del.statusCode, del.body).toBeLessThan(300);
    }
    const { ms, iso } = future(30);
    const start = '2024-02-29T10:00:00.000Z';
    const name = 'Zoë \\ "Tab\there", 名前';
    const lines = [
      'start_date,user_id,user_name,end_date', // 1: any order
      `${start},${named},"${name.replace(/"/g, '""')}",${iso}`, // 2
      `,${known},Ada,${ms}`, // 3: a new name for a known user, no start
      `1709200800000,${keeps},,${ms}`, // 4: no name: the stored one stays; the start as 13 digits
      `${iso},${started},,${iso}`, // 5: starts when it ends: accepted
      `${future(31).iso},${late},,${iso}`, // 6: starts after it ends
      `2024-02-30T00:00:00.000Z,${badStart},,${iso}`, // 7: no such day
      `,${longName},${'x'.repeat(201)},${iso}`, // 8: longer than the API takes
    ];
    const before = Date.now();
    const report = await importMemberships(deps(), t.projectId, csv(lines), { batchSize: 2 });
    expect(report.rejections.map((r) => [r.line, r.user_id, r.reason])).toStrictEqual([
      [6, late, 'start_date must not be after end_date'],
      [7, badStart, 'start_date must be a 13-digit Unix timestamp in milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ'],
      [8, longName, 'user_name must be at most 200 characters, without NUL characters'],
    ]);
    expect(report).toMatchObject({ rows: 7, inserted: 4, rejected: 3 });

    // The API's view: each membership's start and its user's name.
    const view = async (user: string) => {
      const res = await t.request({ method: 'GET', url: `${t.base}/memberships?user_id=${user}` });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data[0] as { membership_id: string; membership_start_date: string; user_name: unknown };
    };
    expect(await view(named)).toMatchObject({ membership_start_date: start, user_name: { first_name: name, username: null } });
    expect(await view(known)).toMatchObject({ user_name: { first_name: 'Ada', username: 'old_handle' } });
    const keptStart = await view(keeps);
    expect(keptStart).toMatchObject({ membership_start_date: '2024-02-29T10:00:00.000Z', user_name: { first_name: 'Old', username: 'old_handle' } });
    expect(await view(started)).toMatchObject({ membership_start_date: iso, user_name: null });
    const unstarted = Date.parse((await view(known)).membership_start_date);
    expect(unstarted).toBeGreaterThanOrEqual(before - 1_000);
    expect(unstarted).toBeLessThanOrEqual(Date.now() + 1_000);
    const users = rowsOf<{ user_id: string; first_name: string | null }>(
      await w.h.database.db.execute(sql`SELECT user_id, first_name FROM users WHERE project_id = ${t.projectId} AND user_id IN (${named}, ${known}, ${keeps})`),
    );
    expect(Object.fromEntries(users.map((u) => [u.user_id, u.first_name]))).toStrictEqual({ [named]: name, [known]: 'Ada', [keeps]: 'Old' });

    // Each event carries what the API shows, start and name included.
    const created = (await eventRows(w.h, t.projectId)).filter((ev) => ev.type === 'membership.created').slice(2);
    expect(created).toHaveLength(4);
    for (const ev of created) {
      const m = ev.data.membership as { membership_id: string };
      const api = (await t.request({ method: 'GET', url: `${t.base}/memberships/${m.membership_id}` })).json().data;
      expect(ev.data, JSON.stringify(api)).toStrictEqual({ membership: api });
    }
  });

  it('writes a chunk of thousands in one statement: one fan-out batch, one delivery per event', async () => {
    const t = await w.tenant();
    await createHook(t, 'http://127.0.0.1:9/many');
    const end = future(3).ms;
    const lines = Array.from({ length: 5_000 }, (_, i) => `${10_000_000 + i},${end}`);
    const report = await importMemberships(deps(), t.projectId, csv(lines), { batchSize: 2_000 });
    expect(report).toMatchObject({ inserted: 5_000, rejected: 0 });
    const [count] = rowsOf<{ events: number; deliveries: number }>(
      await w.h.database.db.execute(sql`
        SELECT (SELECT count(*)::int FROM events WHERE project_id = ${t.projectId} AND type = 'membership.created') AS events,
               (SELECT count(DISTINCT event_id)::int FROM webhook_deliveries WHERE project_id = ${t.projectId}) AS deliveries`),
    );
    expect(count).toStrictEqual({ events: 5_000, deliveries: 5_000 });
  });

  it('keeps the chunks committed before a failure, writes nothing of the failed one, and reports the error', async () => {
    const t = await w.tenant();
    const real = store();
    let calls = 0;
    // The second chunk fails inside its transaction (a bad project id after the COPY).
    const failing: ImportChunks = {
      concurrency: 1,
      run: (work) =>
        real.run((chunk) =>
          work({
            stage: (rows) => chunk.stage(rows),
            merge: (projectId) => chunk.merge(++calls === 2 ? '00000000-0000-4000-8000-000000000000' : projectId),
          }),
        ),
    };
    const end = future(3).ms;
    const lines = Array.from({ length: 9 }, (_, i) => `${20_000_000 + i},${end}`);
    await expect(importMemberships(deps(failing), t.projectId, csv(lines), { batchSize: 3 })).rejects.toThrow();
    const rows = await membershipRows(w.h, t.projectId);
    expect(rows.map((m) => m.user_id)).toStrictEqual(['20000000', '20000001', '20000002']);
    const [none] = rowsOf<{ n: number }>(
      await w.h.database.db.execute(sql`SELECT count(*)::int AS n FROM memberships WHERE project_id = '00000000-0000-4000-8000-000000000000'`),
    );
    expect(none!.n).toBe(0);
    // A second run completes the file: what was committed is reported as already imported.
    const again = await importMemberships(deps(real), t.projectId, csv(lines), { batchSize: 3 });
    expect(again).toMatchObject({ inserted: 6, rejected: 3 });
  });
  it("writes chunks of the storage's size when none is given: 20,000 rows on PostgreSQL, 5,000 on PGlite", async () => {
    const t = await w.tenant();
    const real = store();
    expect(real.chunkRows).toBe(onPostgres ? DEFAULT_BATCH : EMBEDDED_BATCH);
    const staged: number[] = [];
    const counting: ImportChunks = {
      concurrency: real.concurrency,
      chunkRows: 4,
      run: (work) => real.run((chunk) => work({ stage: (rows) => (staged.push(rows.length), chunk.stage(rows)), merge: (projectId) => chunk.merge(projectId) })),
    };
    const end = future(3).ms;
    const lines = Array.from({ length: 10 }, (_, i) => `${30_000_000 + i},${end}`);
    const report = await importMemberships(deps(counting), t.projectId, csv(lines));
    expect(report).toMatchObject({ inserted: 10, rejected: 0 });
    expect(staged).toStrictEqual([4, 4, 2]);
  });
});
