import { sql } from 'drizzle-orm';
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { BulkExtendResumer } from '../../src/domain/memberships/bulk-extend.resumer.js';
import { createLogger } from '../../src/logger.js';
import type { BulkExtendJob } from '../../src/domain/memberships/bulk-extend.js';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, eventRows, failEventInserts, membershipRows } from '../support/api.js';
import { future, onPostgres, useHarness, type Tenant } from '../support/harness.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Bulk extends run as a durable job of short batches (MembershipsService, src/store/bulk-extend.store.ts): each batch
 * commits on its own, so a single extend of another member never waits for the whole bulk; a job
 * a crash left half done is finished by the resume, which writes its one event then.
 */
describe('bulk extend: a job of short batches', () => {
  const h = useHarness();
  // Each test resumes "every stale job of the database": none may be left over from another.
  beforeEach(() => h.reset());

  const store = () => h.container.stores.bulkExtend;
  const service = () => h.services.memberships;

  /**
   * `n` memberships created a minute ago (so after any job started now), every third one expired;
   * all share one created_at, as an import makes them. Returns them in the jobs' order (user_id).
   */
  async function seed(t: Tenant, n: number): Promise<{ id: string; user_id: string }[]> {
    return rowsOf<{ id: string; user_id: string }>(
      await h.database.db.execute(sql`
        WITH ins AS (
          INSERT INTO memberships (project_id, user_id, end_date, status, created_at)
          SELECT ${t.projectId}, (100000000000 + g)::text,
                 CASE WHEN g % 3 = 0 THEN now() - interval '1 day' ELSE now() + interval '10 days' END,
                 CASE WHEN g % 3 = 0 THEN 'expired' ELSE 'active' END,
                 date_trunc('milliseconds', now() - interval '1 minute')
          FROM generate_series(1, ${n}) g
          RETURNING id, user_id, created_at)
        SELECT id, user_id FROM ins ORDER BY user_id`),
    );
  }

  const bulkEvents = async (t: Tenant) => (await eventRows(h, t.projectId)).filter((e) => e.type === 'membership.bulk-extended');
  const endDates = async (t: Tenant) => new Map((await membershipRows(h, t.projectId)).map((m) => [m.user_id, m]));
  const extendOne = (t: Tenant, user: string, iso: string) =>
    t.request({ method: 'PATCH', url: `${t.base}/memberships/${user}/extend`, payload: { extend: iso } });

  /** Runs the job's batches until it is over. */
  async function finish(job: BulkExtendJob, batchSize: number) {
    for (;;) {
      const progress = await service().runBulkExtendBatch(job, batchSize);
      if (progress.status !== 'running') return progress;
    }
  }

  it('sets every membership (expired ones active again) over several batches, with one event carrying the total', async () => {
    const t = await h.tenant();
    // Over two batches of the service's size and a bit.
    await seed(t, 12_001);
    const target = future(40).iso;
    const result = await service().extendAll(t.projectId, target);
    expect(result).toStrictEqual({ ok: true, value: { total: 12_001, newEndDate: new Date(target) } });
    const summary = rowsOf<{ n: number; end_date: string; status: string }>(
      await h.database.db.execute(sql`
        SELECT count(*)::int AS n, to_char(end_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS end_date, status
        FROM memberships WHERE project_id = ${t.projectId} GROUP BY 2, 3`),
    );
    expect(summary).toStrictEqual([{ n: 12_001, end_date: target, status: 'active' }]);
    expect(await bulkEvents(t)).toStrictEqual([
      { type: 'membership.bulk-extended', project_id: t.projectId, data: { total: 12_001, new_end_date: target } },
    ]);
  });

  it('commits batch by batch: the event comes with the last one, and between batches no row is locked', async () => {
    const t = await h.tenant();
    const members = await seed(t, 5);
    const target = future(41).iso;
    const job = await service().startBulkExtend(t.projectId, new Date(target));

    expect(await service().runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'running', total: 2 });
    const rows = await endDates(t);
    expect(members.map((m) => rows.get(m.user_id)!.end_date === target)).toStrictEqual([true, true, false, false, false]);
    expect(await bulkEvents(t)).toStrictEqual([]);
    // Every membership of the project can be locked at once: the first batch holds none any more.
    const locked = await h.database.db.transaction(async (tx) =>
      rowsOf(await tx.execute(sql`SELECT id FROM memberships WHERE project_id = ${t.projectId} FOR UPDATE NOWAIT`)),
    );
    expect(locked).toHaveLength(5);

    expect(await service().runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'running', total: 4 });
    expect(await bulkEvents(t)).toStrictEqual([]);
    expect(await service().runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'done', total: 5 });
    expect(await bulkEvents(t)).toStrictEqual([
      { type: 'membership.bulk-extended', project_id: t.projectId, data: { total: 5, new_end_date: target } },
    ]);
    expect([...(await endDates(t)).values()].map((m) => [m.end_date, m.status])).toStrictEqual(Array(5).fill([target, 'active']));
    // A finished job does nothing more, and writes no second event.
    expect(await service().runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'done', total: 5 });
    expect(await bulkEvents(t)).toHaveLength(1);
  });

  it('a single extend of another member goes through while a batch of the bulk is in progress', async () => {
    const t = await h.tenant();
    const members = await seed(t, 6);
    const [first, , inBatch2, , , last] = members.map((m) => m.user_id) as [string, string, string, string, string, string];
    const bulkDate = future(42).iso;
    const singleDate = future(90).iso;
    const job = await service().startBulkExtend(t.projectId, new Date(bulkDate));
    await service().runBulkExtendBatch(job, 2);

    if (onPostgres) {
      // Another session holds one row of the second batch, so that batch stays in progress (its
      // statement waits for that row) until the session commits.
      const blocker = new pg.Client({ connectionString: h.databaseUrl! });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2 FOR UPDATE', [t.projectId, inBatch2]);
        let settled = false;
        const batch = service()
          .runBulkExtendBatch(job, 2)
          .finally(() => (settled = true));
        // Asked outside the blocker's transaction, which would keep its first view of the activity.
        await eventually(async () => {
          const waiting = await h.database.db.execute(sql`
            SELECT 1 FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%bulk_extend_jobs%'`);
          return rowsOf(waiting).length === 1;
        }, 'the batch waits for the locked row');

        // Members of a batch already committed and of a batch not yet begun: neither waits.
        for (const user of [first, last]) {
          const res = await extendOne(t, user, singleDate);
          expect(res.statusCode, res.body).toBe(200);
        }
        expect(settled).toBe(false);
        await blocker.query('COMMIT');
        expect(await batch).toStrictEqual({ status: 'running', total: 4 });
      } finally {
        await blocker.end();
      }
    } else {
      // One embedded connection runs one statement at a time: a single extend is served between
      // two batches, never behind the whole bulk.
      for (const user of [first, last]) {
        const res = await extendOne(t, user, singleDate);
        expect(res.statusCode, res.body).toBe(200);
      }
      await service().runBulkExtendBatch(job, 2);
    }

    expect(await finish(job, 2)).toStrictEqual({ status: 'done', total: 6 });
    const rows = await endDates(t);
    // The bulk had passed `first` (the single extend came later and stays); `last` it reached after.
    expect(rows.get(first)!.end_date).toBe(singleDate);
    expect(rows.get(last)!.end_date).toBe(bulkDate);
    expect(await bulkEvents(t)).toHaveLength(1);
  });

  it('a job left mid-way by a crash is finished by the resume, which writes its one event', async () => {
    const t = await h.tenant();
    const members = await seed(t, 5);
    const target = future(43).iso;
    const job = await service().startBulkExtend(t.projectId, new Date(target));
    await service().runBulkExtendBatch(job, 2);
    await service().runBulkExtendBatch(job, 2);
    // The last batch dies mid-statement (its event cannot be written): it rolls back whole.
    const restore = await failEventInserts(h, t.projectId);
    try {
      await expect(service().runBulkExtendBatch(job, 2)).rejects.toThrow();
    } finally {
      await restore();
    }
    const rows = await endDates(t);
    expect(members.map((m) => rows.get(m.user_id)!.end_date === target)).toStrictEqual([true, true, true, true, false]);
    expect(await bulkEvents(t)).toStrictEqual([]);
    expect(await store().progress(job.id)).toStrictEqual({ status: 'running', total: 4 });

    // A job that made progress lately has a runner: the periodic resume leaves it alone.
    expect(await service().resumeBulkExtends()).toBe(0);
    // Its runner is gone (the process crashed): once stale, the resume finishes it.
    expect(await service().resumeBulkExtends(0)).toBe(1);
    expect([...(await endDates(t)).values()].map((m) => [m.end_date, m.status])).toStrictEqual(Array(5).fill([target, 'active']));
    expect(await bulkEvents(t)).toStrictEqual([
      { type: 'membership.bulk-extended', project_id: t.projectId, data: { total: 5, new_end_date: target } },
    ]);
    expect(await store().progress(job.id)).toStrictEqual({ status: 'done', total: 5 });
    expect(await service().resumeBulkExtends(0)).toBe(0);
    expect(await bulkEvents(t)).toHaveLength(1);
  });

  it('the resumer the worker runtime runs finishes a job whose runner is gone, at its start', async () => {
    const t = await h.tenant();
    await seed(t, 3);
    const target = future(49).iso;
    const job = await service().startBulkExtend(t.projectId, new Date(target));
    await service().runBulkExtendBatch(job, 2);
    // Its last batch a minute ago: the process that ran it is gone.
    await h.database.db.execute(sql`UPDATE bulk_extend_jobs SET heartbeat_at = now() - interval '1 minute' WHERE id = ${job.id}`);
    const resumer = new BulkExtendResumer(service(), createLogger('silent'), 60_000);
    resumer.start();
    try {
      await eventually(async () => (await store().progress(job.id)).status === 'done', 'the job is finished');
    } finally {
      await resumer.stop();
    }
    expect((await bulkEvents(t)).map((e) => e.data)).toStrictEqual([{ total: 3, new_end_date: target }]);
  });

  it('covers the memberships created before it started; one created during the job keeps its own end date', async () => {
    const t = await h.tenant();
    await seed(t, 4);
    const target = future(44).iso;
    const job = await service().startBulkExtend(t.projectId, new Date(target));
    // The boundary a second back, so that "after" does not hinge on the clock's milliseconds.
    await h.database.db.execute(sql`UPDATE bulk_extend_jobs SET boundary = boundary - interval '1 second' WHERE id = ${job.id}`);
    await service().runBulkExtendBatch(job, 2);
    const late = await createMembership(t, { endDate: future(7).iso });

    expect(await finish(job, 2)).toStrictEqual({ status: 'done', total: 4 });
    const rows = await endDates(t);
    expect(rows.get(late.user_id)).toMatchObject({ end_date: late.membership_end_date, status: 'active' });
    expect([...rows.values()].filter((m) => m.end_date === target)).toHaveLength(4);
    expect((await bulkEvents(t)).map((e) => e.data)).toStrictEqual([{ total: 4, new_end_date: target }]);
  });

  it('a second bulk extend supersedes a running one: the later date wins, each call has its one event and its total', async () => {
    const t = await h.tenant();
    await seed(t, 5);
    const [date1, date2] = [future(45).iso, future(46).iso];
    const first = await service().startBulkExtend(t.projectId, new Date(date1));
    await service().runBulkExtendBatch(first, 2);

    const second = await service().startBulkExtend(t.projectId, new Date(date2));
    // The first is over, as if it had finished just before the second began.
    expect(await store().progress(first.id)).toStrictEqual({ status: 'superseded', total: 5 });
    expect(await service().runBulkExtendBatch(first, 2)).toStrictEqual({ status: 'superseded', total: 5 });
    expect((await bulkEvents(t)).map((e) => e.data)).toStrictEqual([{ total: 5, new_end_date: date1 }]);

    expect(await finish(second, 2)).toStrictEqual({ status: 'done', total: 5 });
    expect([...(await endDates(t)).values()].map((m) => m.end_date)).toStrictEqual(Array(5).fill(date2));
    expect((await bulkEvents(t)).map((e) => e.data)).toStrictEqual([
      { total: 5, new_end_date: date1 },
      { total: 5, new_end_date: date2 },
    ]);
  });

  it('two bulk extends of one project at once both answer; every membership ends with one of the two dates, the same for all', async () => {
    const t = await h.tenant();
    await seed(t, 7_000);
    const dates = [future(47).iso, future(48).iso];
    const results = await Promise.all(dates.map((d) => service().extendAll(t.projectId, d)));
    for (const r of results) expect(r).toMatchObject({ ok: true, value: { total: 7_000 } });
    const distinct = rowsOf<{ end_date: Date }>(
      await h.database.db.execute(sql`SELECT DISTINCT end_date FROM memberships WHERE project_id = ${t.projectId}`),
    );
    expect(distinct).toHaveLength(1);
    // The winner is the call recorded last: its event is the later one.
    const events = (await bulkEvents(t)).map((e) => e.data);
    expect(events).toHaveLength(2);
    expect(new Date(distinct[0]!.end_date).toISOString()).toBe(events[1]!.new_end_date);
  });
});
