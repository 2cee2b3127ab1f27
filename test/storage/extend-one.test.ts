import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { MembershipsStore } from '../../src/store/memberships.store.js';
import { WAKE_INTERVAL_MS } from '../../src/database/wakeups.js';
import { future, onPostgres, useHarness, userId } from '../support/harness.js';

/**
 * extendOne's statement (MembershipsStore). It runs as a named prepared statement
 * (src/database/prepared.ts): on PostgreSQL each pooled connection prepares it once and reuses it.
 * The first tests hold it to what the unnamed statement did: the change and its event in one
 * statement, the previous end date of the very row it changed (concurrent extends of one member
 * chain), a wake-up once committed, and, given a transaction's handle, a statement of that
 * transaction that wakes only at its commit. The last ones hold its batching
 * (src/database/write-batcher.ts): extends sent while others of the project wait go in one
 * statement, and each keeps what it had alone: its own answer, its own event with the end date its
 * own row had, and, for a member not there, null.
 */

const h = useHarness();

interface ExtendedEvent {
  user_id: string;
  membership_end_date: string;
  previous_end_date: string;
  /** The writing transaction (xmin): events of one statement share it. */
  tx: string;
}

const extendedEvents = async (projectId: string) =>
  rowsOf<ExtendedEvent>(
    await h.database.db.execute(sql`
      SELECT data->'membership'->>'user_id' AS user_id, data->'membership'->>'membership_end_date' AS membership_end_date,
             data->>'previous_end_date' AS previous_end_date, xmin::text AS tx
      FROM events WHERE project_id = ${projectId} AND type = 'membership.extended' ORDER BY seq`),
  );

describe(`extendOne as a prepared statement (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('answers and records the previous end date on every pooled connection, one event per extend', async () => {
    const t = await h.tenant();
    const user = userId();
    let previous = future(1).iso;
    const created = await h.services.memberships.create(t.projectId, { user_id: user, end_date: previous });
    expect(created.ok).toBe(true);
    const store = new MembershipsStore(h.database.db);
    // More calls than the pool has connections, in sequence: each connection runs it at least
    // once prepared and then again from its own prepared statement.
    for (let day = 2; day <= 25; day++) {
      const next = new Date(future(day).ms);
      const extended = await store.extendOne(t.projectId, user, next);
      expect(extended?.previousEndDate).toBe(previous);
      previous = next.toISOString();
    }
    const events = await extendedEvents(t.projectId);
    expect(events).toHaveLength(24);
    for (let i = 1; i < events.length; i++) expect(events[i]!.previous_end_date).toBe(events[i - 1]!.membership_end_date);
    expect(await store.extendOne(t.projectId, userId(), new Date(future(3).ms))).toBeNull();
  });

  it('chains concurrent extends of one member: each event names the end date the one before it set', async () => {
    const t = await h.tenant();
    const user = userId();
    const start = future(1).iso;
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: start })).ok).toBe(true);
    const store = new MembershipsStore(h.database.db);
    const dates = Array.from({ length: 12 }, (_, i) => new Date(future(40 + i).ms));
    await Promise.all(dates.map((d) => store.extendOne(t.projectId, user, d)));
    const events = await extendedEvents(t.projectId);
    expect(events).toHaveLength(12);
    expect(events[0]!.previous_end_date).toBe(start);
    for (let i = 1; i < events.length; i++) expect(events[i]!.previous_end_date).toBe(events[i - 1]!.membership_end_date);
    expect(new Set(events.map((e) => e.membership_end_date))).toStrictEqual(new Set(dates.map((d) => d.toISOString())));
  });

  it('wakes the live broadcaster once the extend and its event are committed', async () => {
    const t = await h.tenant();
    const user = userId();
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: future(1).iso })).ok).toBe(true);
    await sleep(3 * WAKE_INTERVAL_MS);
    const seen: number[] = [];
    const stop = await h.database.wakeups.subscribe('events', () => {
      void extendedEvents(t.projectId).then((e) => seen.push(e.length));
    });
    try {
      await new MembershipsStore(h.database.db).extendOne(t.projectId, user, new Date(future(5).ms));
      await vi.waitFor(() => expect(seen).toContain(1), { timeout: 5_000, interval: 20 });
    } finally {
      stop();
    }
  });

  it("in a transaction, is one of the transaction's statements: rolled back with it, and no wake-up", async () => {
    const t = await h.tenant();
    const user = userId();
    const start = future(1).iso;
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: start })).ok).toBe(true);
    await sleep(3 * WAKE_INTERVAL_MS);
    let woken = 0;
    const stop = await h.database.wakeups.subscribe('events', () => woken++);
    try {
      await expect(
        h.database.db.transaction(async (tx) => {
          const extended = await new MembershipsStore(tx).extendOne(t.projectId, user, new Date(future(9).ms));
          expect(extended?.previousEndDate).toBe(start);
          throw new Error('abandon');
        }),
      ).rejects.toThrow('abandon');
      await sleep(3 * WAKE_INTERVAL_MS);
      expect(woken).toBe(0);
      expect(await extendedEvents(t.projectId)).toHaveLength(0);
      await h.database.db.transaction((tx) => new MembershipsStore(tx).extendOne(t.projectId, user, new Date(future(9).ms)));
      await vi.waitFor(() => expect(woken).toBeGreaterThan(0));
      expect(await extendedEvents(t.projectId)).toHaveLength(1);
    } finally {
      stop();
    }
  });
});

/** `count` members of a new project, each with its own end date; their user ids and those dates. */
async function members(count: number) {
  const t = await h.tenant();
  const created = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const user = userId();
    const end = future(1 + i).iso;
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: end })).ok).toBe(true);
    created.set(user, end);
  }
  return { projectId: t.projectId, created };
}

describe(`extends batched into one statement (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('answers each extend with its own previous end date and writes its own event, in one transaction', async () => {
    const { projectId, created } = await members(12);
    const store = new MembershipsStore(h.database.db, undefined, 1);
    const users = [...created.keys()];
    const missing = userId();
    const next = new Map(users.map((u, i) => [u, future(100 + i)]));
    const answers = await Promise.all([
      ...users.map((u) => store.extendOne(projectId, u, new Date(next.get(u)!.ms))),
      store.extendOne(projectId, missing, new Date(future(100).ms)),
    ]);
    expect(answers.slice(0, users.length).map((a) => a?.previousEndDate)).toStrictEqual(users.map((u) => created.get(u)));
    expect(answers.at(-1)).toBeNull();

    const events = await extendedEvents(projectId);
    expect(events.map((e) => e.user_id).sort()).toStrictEqual([...users].sort());
    for (const e of events) {
      expect(e.previous_end_date).toBe(created.get(e.user_id));
      expect(e.membership_end_date).toBe(next.get(e.user_id)!.iso);
    }
    // Submitted in one turn of the event loop: one statement, so one transaction wrote them all.
    expect(new Set(events.map((e) => e.tx)).size).toBe(1);
  });

  it('locks its members in user_id order, whatever order their extends came in, as the bulk extend does', async () => {
    const { projectId, created } = await members(3);
    const [a, b, c] = rowsOf<{ user_id: string }>(
      await h.database.db.execute(sql`SELECT user_id FROM memberships WHERE project_id = ${projectId} ORDER BY user_id`),
    ).map((r) => r.user_id) as [string, string, string];
    const store = new MembershipsStore(h.database.db, undefined, 1);
    const extendAll = () => Promise.all([c, b, a].map((u) => store.extendOne(projectId, u, new Date(future(300).ms))));
    if (!h.databaseUrl) {
      // Embedded storage runs one transaction at a time: nothing can hold a member meanwhile.
      expect((await extendAll()).map((x) => x?.previousEndDate)).toStrictEqual([c, b, a].map((u) => created.get(u)));
      return;
    }
    // b is held by another transaction; the statement (members sent as c, b, a) locks a, then
    // waits for b, and has not touched c: two statements sharing members cannot deadlock.
    const [locker, prober] = [new pg.Client({ connectionString: h.databaseUrl }), new pg.Client({ connectionString: h.databaseUrl })];
    await Promise.all([locker.connect(), prober.connect()]);
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2 FOR UPDATE', [projectId, b]);
      const extending = extendAll();
      const state = await Promise.race([extending.then(() => 'done'), sleep(300).then(() => 'waiting')]);
      expect(state).toBe('waiting');
      const free = await prober.query<{ user_id: string }>(
        'SELECT user_id FROM memberships WHERE project_id = $1 AND user_id = ANY($2) ORDER BY user_id FOR UPDATE SKIP LOCKED',
        [projectId, [a, c]],
      );
      expect(free.rows.map((r) => r.user_id)).toStrictEqual([c]);
      await locker.query('COMMIT');
      expect((await extending).map((x) => x?.previousEndDate)).toStrictEqual([c, b, a].map((u) => created.get(u)));
    } finally {
      await Promise.all([locker.end(), prober.end()]);
    }
  });
});
