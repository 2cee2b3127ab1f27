import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { freePort, startRedis, type RedisProcess } from '../support/processes.js';
import { capturedLogs } from '../support/logs.js';

/**
 * A Redis that stalls (SIGSTOP: a fork or fsync stall, a paused VM) keeps its connections open and
 * answers nothing; on SIGCONT it runs every command its sockets hold. Under steady load from keys
 * that stay within their limits, a stall must refuse and suspend no one, during it or after it
 * (when a backlog of counts, had it been kept, would land in the shared windows all at once), and
 * a request during it waits for Redis at most once (the command timeout), not once per limiter
 * call. The Redis is the test's own, so it can be frozen.
 */

const KEYS = 6;
/** Requests per second per key: 60% of the burst limit, so a backlog of a stall would overflow it. */
const RATE = 6;
const BURST = 10;
const STALL_MS = 3_000;

let redis: RedisProcess;
let redisPid: number;
let h: Harness;
const { lines: logLines, logger } = capturedLogs<{ level: number; msg: string }>();
const prefix = `tenure-stall-${randomBytes(4).toString('hex')}:`;

function admin(): Redis {
  return new Redis({ port: redis.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
}

beforeAll(async () => {
  redis = await startRedis(await freePort());
  const client = admin();
  await client.connect();
  redisPid = Number(/process_id:(\d+)/.exec(await client.info('server'))![1]);
  client.disconnect();
  h = await createHarness({
    env: {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      TENURE_RATE_LIMIT_BURST: String(BURST),
      TENURE_RATE_LIMIT_KEY: '100000',
      TENURE_RATE_LIMIT_IP: '100000',
      // Three refusals suspend: any refusal a stall causes shows as a suspension too.
      TENURE_SUSPENSION_THRESHOLD: '3',
    },
    logger,
  });
});

afterAll(async () => {
  if (redisPid) process.kill(redisPid, 'SIGCONT');
  await h?.close();
  await redis?.stop();
});

interface Sent {
  key: number;
  at: number;
  ms: number;
  status: number;
  body: string;
}

it('refuses and suspends no key within its limits during and after a Redis stall, and waits for Redis once', async () => {
  const tenants = await Promise.all(Array.from({ length: KEYS }, () => h.tenant()));
  // A key of its own whose requests at the stall's start are given up on: they must never count.
  const quiet = await h.tenant();
  const quietCall = () => h.app.inject({ method: 'GET', url: `${quiet.base}/memberships?limit=1`, headers: quiet.headers });
  for (let i = 0; i < 2; i++) expect((await quietCall()).statusCode).toBe(200);
  const sent: Promise<Sent>[] = [];
  const t0 = Date.now();
  const send = async (key: number): Promise<Sent> => {
    const { base, headers } = tenants[key]!;
    const at = Date.now() - t0;
    const res = await h.app.inject({ method: 'GET', url: `${base}/memberships?limit=1`, headers });
    return { key, at, ms: Date.now() - t0 - at, status: res.statusCode, body: res.body };
  };
  const timers = tenants.map((_, key) => setInterval(() => sent.push(send(key)), 1000 / RATE));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  await sleep(1_000);
  const stallStart = Date.now() - t0;
  process.kill(redisPid, 'SIGSTOP');
  const givenUp = Array.from({ length: 5 }, quietCall);
  await sleep(STALL_MS);
  process.kill(redisPid, 'SIGCONT');
  const stallEnd = Date.now() - t0;
  // Long enough for a backlog to be run and for two burst windows to follow it.
  await sleep(3_000);
  timers.forEach(clearInterval);
  const results = await Promise.all(sent);
  expect((await Promise.all(givenUp)).map((r) => r.statusCode)).toEqual(Array(5).fill(200));

  const refused = results.filter((r) => r.status !== 200);
  expect(refused, JSON.stringify(refused.slice(0, 5))).toEqual([]);
  const during = results.filter((r) => r.at >= stallStart && r.at < stallEnd).map((r) => r.ms).sort((a, b) => a - b);
  expect(during.length).toBeGreaterThan(KEYS * RATE * 2);
  // Each request waits for the 500 ms command timeout at most once (bound with slack for a busy machine)...
  expect(during.at(-1)).toBeLessThan(1_500);
  // ...and only the requests in flight when Redis stopped answering wait at all: the rest are
  // counted in memory at once.
  expect(during[Math.floor(during.length / 2)]).toBeLessThan(250);

  // Nothing was suspended, or recorded toward a suspension, in Redis.
  const client = admin();
  await client.connect();
  try {
    expect(await client.keys(`${prefix}*violations*`)).toEqual([]);
    // The quiet key's minute holds its two requests before the stall, not the five Redis ran late.
    expect(await client.get(`${prefix}rl:key:key:${quiet.keyId}`)).toBe('2');
  } finally {
    client.disconnect();
  }
  expect(logLines.filter((l) => /Redis is unreachable/.test(l.msg)).length).toBeGreaterThan(0);
  expect(logLines.filter((l) => /Redis is reachable again/.test(l.msg)).length).toBeGreaterThan(0);
}, 30_000);
