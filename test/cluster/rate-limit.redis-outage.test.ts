import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { freePort, startRedis, type RedisProcess } from '../support/processes.js';
import { capturedLogs } from '../support/logs.js';

/**
 * When the limiter's Redis goes away mid-run, requests keep being served (never a 5xx) under the
 * in-memory insurance limiter, one warning is logged, and the shared store is used again once
 * Redis is back. The Redis here is the test's own, on a spare port, so it can be stopped.
 */

let redis: RedisProcess;
let h: Harness;
let app: FastifyInstance;
let headers: { authorization: string };
let base: string;
const { lines: logLines, logger } = capturedLogs<{ level: number; msg: string }>();
const prefix = `tenure-outage-${randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  const port = await freePort();
  redis = await startRedis(port);
  h = await createHarness({
    env: {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      TENURE_RATE_LIMIT_BURST: '100000',
      TENURE_RATE_LIMIT_KEY: '100000',
      TENURE_RATE_LIMIT_IP: '100000',
    },
    logger,
  });
  app = h.app;
  const t = await h.tenant();
  headers = t.headers;
  base = t.base;
});

afterAll(async () => {
  await h?.close();
  await redis?.stop();
});

const call = () => app.inject({ method: 'GET', url: `${base}/memberships?limit=1`, headers });

async function keysInRedis(port: number): Promise<string[]> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  await client.connect();
  try {
    return await client.keys(`${prefix}*`);
  } finally {
    client.disconnect();
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('serves every request through a Redis outage and uses Redis again when it returns', async () => {
  const before = await call();
  expect(before.statusCode, before.body).toBe(200);
  expect(before.headers['x-ratelimit-remaining']).toBe('99999');
  expect((await keysInRedis(redis.port)).length).toBeGreaterThan(0);

  await redis.stop();
  const during = [];
  for (let i = 0; i < 30; i++) during.push(await call());
  expect(during.map((r) => r.statusCode)).toEqual(Array(30).fill(200));
  for (const r of during) expect(r.headers['x-ratelimit-limit']).toBe('100000');
  const warnings = () => logLines.filter((l) => l.level === 40 && /Redis is unreachable/.test(l.msg));
  await until(() => warnings().length > 0, 'the outage warning');
  for (let i = 0; i < 10; i++) expect((await call()).statusCode).toBe(200);
  // One warning per transition to unreachable, never one per request: a stopping server may take
  // one reconnection before it is gone (seen on a loaded machine), which is announced and then
  // warned about once more.
  const recoveries = logLines.filter((l) => /Redis is reachable again/.test(l.msg)).length;
  expect(warnings()).toHaveLength(recoveries + 1);
  expect(recoveries).toBeLessThanOrEqual(1);

  redis = await startRedis(redis.port);
  await until(() => logLines.filter((l) => /Redis is reachable again/.test(l.msg)).length > recoveries, 'the reconnection');
  const after = await call();
  expect(after.statusCode, after.body).toBe(200);
  // The fresh Redis holds the counters again: the shared store is back in use.
  expect((await keysInRedis(redis.port)).length).toBeGreaterThan(0);
});
