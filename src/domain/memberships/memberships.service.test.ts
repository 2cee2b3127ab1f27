import { describe, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { transactorOver } from '../transactions.js';
import type { BatchSet, BulkExtendJob, BulkExtendProgress, BulkExtendStatements } from './bulk-extend.js';
import { BULK_EXTEND_BATCH, MembershipsService, type MembershipStatements } from './memberships.service.js';

/**
 * The bulk extend's decisions on a twin of its statements: one project's members (user ids in
 * order) and its jobs in memory. The statements themselves, their locks and what a crash leaves
 * are proven in test/storage/bulk-extend.test.ts.
 */
class BulkTwin implements BulkExtendStatements {
  readonly jobs = new Map<string, BulkExtendProgress & { projectId: string; cursor: string; endDate: Date }>();
  readonly events: { total: number; endDate: Date }[] = [];
  readonly calls: string[] = [];
  readonly endDates = new Map<string, Date>();

  constructor(readonly members: string[]) {}

  async lockProject(): Promise<void> {
    this.calls.push('lockProject');
  }
  async supersedeRunning(projectId: string): Promise<void> {
    this.calls.push('supersedeRunning');
    for (const job of this.jobs.values()) {
      if (job.projectId !== projectId || job.status !== 'running') continue;
      job.status = 'superseded';
      job.total += this.members.filter((m) => m > job.cursor).length;
      this.events.push({ total: job.total, endDate: job.endDate });
    }
  }
  async insertJob(projectId: string, endDate: Date): Promise<BulkExtendJob> {
    const id = `job-${this.jobs.size + 1}`;
    this.jobs.set(id, { projectId, endDate, cursor: '', status: 'running', total: 0 });
    return { id, projectId };
  }
  async lockJob(jobId: string): Promise<BulkExtendProgress> {
    this.calls.push('lockJob');
    const { status, total } = this.jobs.get(jobId)!;
    return { status, total };
  }
  async setBatch(job: BulkExtendJob, batchSize: number): Promise<BatchSet> {
    this.calls.push('setBatch');
    const state = this.jobs.get(job.id)!;
    const after = this.members.filter((m) => m > state.cursor);
    const batch = after.slice(0, batchSize);
    for (const m of batch) this.endDates.set(m, state.endDate);
    return { set: batch.length, fullUpTo: after.length >= batchSize ? batch.at(-1)! : null };
  }
  async advance(jobId: string, cursor: string, total: number): Promise<void> {
    this.calls.push('advance');
    Object.assign(this.jobs.get(jobId)!, { cursor, total });
  }
  async finish(jobId: string, total: number): Promise<void> {
    this.calls.push('finish');
    const job = Object.assign(this.jobs.get(jobId)!, { status: 'done', total });
    this.events.push({ total, endDate: job.endDate });
  }
  async forgetFinished(): Promise<void> {
    this.calls.push('forgetFinished');
  }
  async claimStale(): Promise<BulkExtendJob[]> {
    this.calls.push('claimStale');
    return [...this.jobs].filter(([, j]) => j.status === 'running').map(([id, j]) => ({ id, projectId: j.projectId }));
  }
}

/** extendAll never reaches the single-membership statements. */
const noMemberships: MembershipStatements = {
  extendOne: () => Promise.reject(new Error('not used')),
  create: () => Promise.reject(new Error('not used')),
  get: () => Promise.reject(new Error('not used')),
  list: () => Promise.reject(new Error('not used')),
  listAfter: () => Promise.reject(new Error('not used')),
  delete: () => Promise.reject(new Error('not used')),
  planExists: () => Promise.reject(new Error('not used')),
};

const members = (n: number) => Array.from({ length: n }, (_, i) => String(100_000 + i));
const serviceOver = (bulk: BulkTwin) =>
  new MembershipsService(noMemberships, systemClock, transactorOver({ bulkExtend: bulk }), bulk);
const later = (days: number) => new Date(Date.now() + days * 86_400_000);

describe('MembershipsService: the bulk extend job', () => {
  it('a full batch advances the cursor; the first short batch is the last: done, with one event', async () => {
    const bulk = new BulkTwin(members(5));
    const service = serviceOver(bulk);
    const job = await service.startBulkExtend('p', later(3));
    expect(bulk.calls).toStrictEqual(['lockProject', 'supersedeRunning']);

    bulk.calls.length = 0;
    expect(await service.runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'running', total: 2 });
    expect(await service.runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'running', total: 4 });
    expect(bulk.events).toStrictEqual([]);
    expect(await service.runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'done', total: 5 });
    expect(bulk.calls).toStrictEqual([
      ...['lockJob', 'setBatch', 'advance'],
      ...['lockJob', 'setBatch', 'advance'],
      ...['lockJob', 'setBatch', 'finish'],
    ]);
    expect(bulk.events.map((e) => e.total)).toStrictEqual([5]);
  });

  it('a batch that exactly fills its size is not the last: the next, empty, one finishes the job', async () => {
    const bulk = new BulkTwin(members(4));
    const service = serviceOver(bulk);
    const job = await service.startBulkExtend('p', later(3));
    expect(await service.runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'running', total: 2 });
    expect(await service.runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'running', total: 4 });
    expect(await service.runBulkExtendBatch(job, 2)).toStrictEqual({ status: 'done', total: 4 });
    expect(bulk.events.map((e) => e.total)).toStrictEqual([4]);
  });

  it('a job no longer running (finished by another runner, or superseded) is left as it is: no batch, no event', async () => {
    const bulk = new BulkTwin(members(5));
    const service = serviceOver(bulk);
    const first = await service.startBulkExtend('p', later(3));
    await service.runBulkExtendBatch(first, 2);
    const second = await service.startBulkExtend('p', later(4));
    // Superseded as if it had finished just before the later call began: every member counted.
    expect(bulk.events.map((e) => e.total)).toStrictEqual([5]);

    bulk.calls.length = 0;
    expect(await service.runBulkExtendBatch(first, 2)).toStrictEqual({ status: 'superseded', total: 5 });
    expect(bulk.calls).toStrictEqual(['lockJob']);

    expect(await service.extendAll('p', later(5).toISOString())).toMatchObject({ ok: true, value: { total: 5 } });
    bulk.calls.length = 0;
    expect(await service.runBulkExtendBatch(second, 2)).toStrictEqual({ status: 'superseded', total: 5 });
    expect(bulk.calls).toStrictEqual(['lockJob']);
  });

  it('extendAll runs the batches until the job is over and answers its total', async () => {
    const n = BULK_EXTEND_BATCH * 2 + 1;
    const bulk = new BulkTwin(members(n));
    const result = await serviceOver(bulk).extendAll('p', later(3).toISOString());
    expect(result).toMatchObject({ ok: true, value: { total: n } });
    // Batches of BULK_EXTEND_BATCH: two full, then the short last one.
    expect(bulk.calls.filter((c) => c === 'setBatch')).toHaveLength(3);
    expect(bulk.events.map((e) => e.total)).toStrictEqual([n]);
    expect(bulk.endDates.size).toBe(n);
  });

  it('an end date not in the future starts no job', async () => {
    const bulk = new BulkTwin(members(3));
    const result = await serviceOver(bulk).extendAll('p', new Date(Date.now() - 1_000).toISOString());
    expect(result.ok).toBe(false);
    expect(bulk.jobs.size).toBe(0);
  });

  it('the resume forgets old jobs, then runs each stale one to its end', async () => {
    const bulk = new BulkTwin(members(3));
    const service = serviceOver(bulk);
    const job = await service.startBulkExtend('p', later(3));
    await service.runBulkExtendBatch(job, 2);
    bulk.calls.length = 0;
    expect(await service.resumeBulkExtends(0)).toBe(1);
    expect(bulk.calls.slice(0, 2)).toStrictEqual(['forgetFinished', 'claimStale']);
    expect(bulk.jobs.get(job.id)).toMatchObject({ status: 'done', total: 3 });
    expect(bulk.events.map((e) => e.total)).toStrictEqual([3]);
  });
});
