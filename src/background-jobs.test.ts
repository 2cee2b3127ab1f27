import { describe, expect, it } from 'vitest';
import { checkJobs, job, startJobs, stopJobs } from './background-jobs.js';
import { JOB_NAMES } from './worker-runtime.js';

/** A job twin that writes what happens to it into `log`; its stop ends when `release` is called. */
function twin(log: string[], name: string) {
  const stopping: (() => void)[] = [];
  return {
    start: () => void log.push(`start ${name}`),
    stop: () =>
      new Promise<void>((resolve) => {
        log.push(`stop ${name}`);
        stopping.push(() => {
          log.push(`stopped ${name}`);
          resolve();
        });
      }),
    release: () => stopping.forEach((done) => done()),
  };
}

describe('background jobs: one list, checked at start-up', () => {
  const names = ['sweeper', 'pruner', 'planner'] as const;
  const list = (...jobNames: string[]) => jobNames.map((name) => job(name, { start() {}, async stop() {} }));

  it('accepts every expected job once', () => {
    expect(() => checkJobs(names, list('sweeper', 'pruner', 'planner'))).not.toThrow();
  });

  it('refuses a missing job, naming it', () => {
    expect(() => checkJobs(names, list('sweeper', 'planner'))).toThrow('background jobs not registered: pruner');
  });

  it('refuses two jobs under one name', () => {
    expect(() => checkJobs(names, list('sweeper', 'pruner', 'planner', 'pruner'))).toThrow('background job "pruner" is registered twice');
  });

  it('refuses a job that is not one of the names', () => {
    expect(() => checkJobs(names, list('sweeper', 'pruner', 'planner', 'sweepr'))).toThrow('background job "sweepr" is registered but not one of');
  });

  it('the worker runtime names each of its jobs once', () => {
    expect(new Set(JOB_NAMES).size).toBe(JOB_NAMES.length);
  });

  it('a job off in this process (null) is listed, and neither starts nor stops anything', async () => {
    const off = job('vacuumer', null);
    expect(off.runs).toBeNull();
    expect(() => checkJobs(['vacuumer'], [off])).not.toThrow();
    off.start();
    await expect(off.stop()).resolves.toBeUndefined();
  });

  it('starts in the list order and stops stage by stage, each stage together, with the stop it was given', async () => {
    const log: string[] = [];
    const a = twin(log, 'a');
    const b = twin(log, 'b');
    const c = twin(log, 'c');
    const jobs = [job('a', a, { stopStage: 1 }), job('b', b, { stopStage: 0 }), job('c', c, { stopStage: 0, stop: () => c.stop().then(() => void log.push('grace c')) })];
    startJobs(jobs);
    expect(log).toStrictEqual(['start a', 'start b', 'start c']);
    log.length = 0;
    const stopped = stopJobs(jobs);
    await Promise.resolve();
    // Stage 0 (b and c) stops together; a waits for both.
    expect(log).toStrictEqual(['stop b', 'stop c']);
    b.release();
    c.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toStrictEqual(['stop b', 'stop c', 'stopped b', 'stopped c', 'grace c', 'stop a']);
    a.release();
    await stopped;
    expect(log.at(-1)).toBe('stopped a');
  });
});
