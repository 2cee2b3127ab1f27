import { Readable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { importMemberships } from '../../src/domain/memberships/membership-import.js';
import { future, useHarness, type Tenant } from '../support/harness.js';

/**
 * Suspension is for clients that ignore the limits (docs/rate-limits.md, "Suspension"): a client
 * paging a large list at its key's limit, for 30 minutes of a manual clock, waiting every
 * Retry-After it is told, is refused about once a minute and never suspended; the same client
 * retrying at half the wait is suspended. The clock is faked (Date only), so the windows and the
 * waits pass without waiting.
 */

const PER_KEY = 5;
const MEMBERS = 1_000;
const h = useHarness({ env: { TENURE_RATE_LIMIT_KEY: String(PER_KEY), TENURE_SUSPENSION_THRESHOLD: '10' } });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
});
afterEach(() => {
  vi.useRealTimers();
});

let t: Tenant;
beforeAll(async () => {
  t = await h.tenant();
  const end = future(30).ms;
  const rows = Array.from({ length: MEMBERS }, (_, i) => `${7_000_000_000 + i},${end}\n`);
  const report = await importMemberships({ chunks: h.container.stores.membershipImport, clock: h.container.clock }, t.projectId, Readable.from(rows));
  expect(report.inserted).toBe(MEMBERS);
});

interface Run {
  pages: number;
  refused: number;
  suspendedAfterMs: number | null;
}

/**
 * Pages the memberships 100 at a time, from the start again at the end, for `minutes` of the fake
 * clock: a request takes 100 ms; after a 429 it waits `waitShare` of the Retry-After it was told.
 */
async function pageFor(minutes: number, waitShare: number): Promise<Run> {
  const started = Date.now();
  const run: Run = { pages: 0, refused: 0, suspendedAfterMs: null };
  let offset = 0;
  while (Date.now() - started < minutes * 60_000) {
    const res: LightMyRequestResponse = await h.app.inject({
      method: 'GET',
      url: `${t.base}/memberships?limit=100&offset=${offset}`,
      headers: t.headers,
      remoteAddress: '10.36.4.1',
    });
    if (res.statusCode === 200) {
      run.pages++;
      offset = offset + 100 >= MEMBERS ? 0 : offset + 100;
      vi.advanceTimersByTime(100);
      continue;
    }
    expect(res.statusCode, res.body).toBe(429);
    const { code, retry_after } = res.json().error as { code: string; retry_after: number };
    expect(res.headers['retry-after']).toBe(String(retry_after));
    if (code === 'ACCESS_SUSPENDED') {
      run.suspendedAfterMs = Date.now() - started;
      return run;
    }
    expect(code, res.body).toBe('RATE_LIMIT_EXCEEDED');
    run.refused++;
    vi.advanceTimersByTime(Math.floor(retry_after * 1000 * waitShare));
  }
  return run;
}

// Some 200 requests a test: on a loaded 2-core machine that can take a minute.
describe('suspension', { timeout: 180_000 }, () => {
  it('never suspends a client that waits every Retry-After it is told, paging at the limit for 30 minutes', async () => {
    const run = await pageFor(30, 1);
    expect(run.suspendedAfterMs).toBeNull();
    // At the limit all along: a window's worth of pages a minute, and a refusal about every minute
    // (three times the 10 in 10 minutes that suspended such a client when every refusal counted).
    expect(run.pages).toBeGreaterThanOrEqual(29 * PER_KEY);
    expect(run.refused).toBeGreaterThanOrEqual(28);
  });

  it('suspends a client that retries before the Retry-After it was told', async () => {
    // Another key of the same project: the first test's key has its own minute.
    const created = await h.services.projects.createKey(t.projectId, 'early', 'cli');
    if (!created.ok) throw new Error(created.error.message);
    t = { ...t, headers: { ...t.headers, authorization: `Bearer ${created.value.key}` } };
    const run = await pageFor(30, 0.5);
    expect(run.suspendedAfterMs).not.toBeNull();
    // Ten early retries: its first wait told, then halving the rest of each minute.
    expect(run.refused).toBeGreaterThanOrEqual(10);
    expect(run.suspendedAfterMs!).toBeLessThan(5 * 60_000);
  });
});
