import { randomInt } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHarness, future, type Harness, type Tenant } from '../support/harness.js';
import { UUID } from '../support/api.js';

/**
 * The rate limits and their 429 (docs/rate-limits.md) through the real app, on the in-memory limiter with the documented defaults.
 * The clock is faked (Date only) so windows can be crossed without waiting; each test speaks from
 * its own client address, so IP counters never leak between tests.
 */

let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    env: { TENURE_RATE_LIMIT_KEY: '100', TENURE_RATE_LIMIT_IP: '300', TENURE_RATE_LIMIT_BURST: '20' },
  });
});
afterAll(() => h.close());

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
});
afterEach(() => {
  vi.useRealTimers();
});

const newIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function caller(t: Tenant, ip: string) {
  return (o: Partial<InjectOptions> = {}) =>
    h.app.inject({
      method: 'GET',
      url: `${t.base}/memberships?limit=1`,
      remoteAddress: ip,
      ...o,
      headers: { ...t.headers, ...(o.headers as Record<string, string> | undefined) },
    } as InjectOptions);
}

/** Sends n requests, `gapMs` of fake time apart (10/s stays under the burst limit). */
async function send(n: number, call: () => Promise<LightMyRequestResponse>, gapMs = 100): Promise<LightMyRequestResponse[]> {
  const out: LightMyRequestResponse[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await call());
    vi.advanceTimersByTime(gapMs);
  }
  return out;
}

function expect429(res: LightMyRequestResponse, code: 'RATE_LIMIT_EXCEEDED' | 'ACCESS_SUSPENDED', maxWait: number) {
  expect(res.statusCode, res.body).toBe(429);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['request_id', 'method', 'path', 'code', 'error']);
  expect(body.request_id).toMatch(UUID);
  expect(body.code).toBe(429);
  expect(Object.keys(body.error)).toEqual(['message', 'code', 'retry_after']);
  expect(body.error.code).toBe(code);
  expect(Number.isInteger(body.error.retry_after)).toBe(true);
  expect(body.error.retry_after).toBeGreaterThanOrEqual(1);
  expect(body.error.retry_after).toBeLessThanOrEqual(maxWait);
  expect(body.error.message).toContain(`${body.error.retry_after} seconds`);
  expect(res.headers['retry-after']).toBe(String(body.error.retry_after));
  return body.error.retry_after as number;
}

describe('rate limits', () => {
  it('lets 100 requests a minute through per key and refuses the 101st until the window resets', async () => {
    const t = await h.tenant();
    const call = caller(t, newIp());
    const ok = await send(100, call);
    expect(ok.map((r) => r.statusCode)).toEqual(Array(100).fill(200));
    expect(ok[99]!.headers['x-ratelimit-remaining']).toBe('0');
    // 100 requests took 10 s of the 60 s window.
    const wait = expect429(await call(), 'RATE_LIMIT_EXCEEDED', 50);
    expect(wait).toBeGreaterThanOrEqual(49);
    vi.advanceTimersByTime(wait * 1000);
    const after = await call();
    expect(after.statusCode, after.body).toBe(200);
    expect(after.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('refuses the 21st request within one second (burst) and lets it through the next second', async () => {
    const t = await h.tenant();
    const call = caller(t, newIp());
    const burst = await send(20, call, 0);
    expect(burst.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    const refused = await call();
    expect(expect429(refused, 'RATE_LIMIT_EXCEEDED', 1)).toBe(1);
    expect(refused.headers['ratelimit']).toMatch(/^"burst";r=0;t=1$/);
    vi.advanceTimersByTime(1000);
    expect((await call()).statusCode).toBe(200);
  });

  it('limits a client address to 300 a minute across several keys', async () => {
    const ip = newIp();
    const tenants = await Promise.all([h.tenant(), h.tenant(), h.tenant(), h.tenant(), h.tenant()]);
    for (const t of tenants.slice(0, 4)) {
      const res = await send(75, caller(t, ip), 60);
      expect(res.every((r) => r.statusCode === 200)).toBe(true);
    }
    const fifth = await caller(tenants[4]!, ip)();
    expect429(fifth, 'RATE_LIMIT_EXCEEDED', 60);
    // Another address with the same key is not affected.
    expect((await caller(tenants[4]!, newIp())()).statusCode).toBe(200);
  });

  it('counts unauthenticated requests against the address, so key guessing is throttled', async () => {
    const ip = newIp();
    const guess = () =>
      h.app.inject({ method: 'GET', url: '/v2/projects/x/memberships', remoteAddress: ip, headers: { authorization: `Bearer tk_live_${'a'.repeat(43)}` } });
    const tries = await send(300, guess, 60);
    expect(tries.every((r) => r.statusCode === 401)).toBe(true);
    expect(tries[0]!.headers['x-ratelimit-limit']).toBe('300');
    expect429(await guess(), 'RATE_LIMIT_EXCEEDED', 60);
  });

  it('puts the headers on every response: 200, 401, 404, 422 and 429', async () => {
    const t = await h.tenant();
    const ip = newIp();
    const call = caller(t, ip);
    const responses = {
      200: await call(),
      401: await call({ headers: { authorization: 'Bearer nope' } }),
      404: await h.app.inject({ method: 'GET', url: '/nowhere', remoteAddress: ip }),
      422: await call({ url: `${t.base}/memberships?limit=0` }),
      429: (await send(25, call, 0)).at(-1)!,
    };
    for (const [status, res] of Object.entries(responses)) {
      expect(res.statusCode, res.body).toBe(Number(status));
      expect(res.headers['x-ratelimit-limit'], status).toMatch(/^\d+$/);
      expect(res.headers['x-ratelimit-remaining'], status).toMatch(/^\d+$/);
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      expect(res.headers['ratelimit-policy']).toBe('"key";q=100;w=60, "ip";q=300;w=60, "burst";q=20;w=1');
      expect(res.headers['ratelimit'], status).toMatch(/^"(key|ip|burst)";r=\d+;t=\d+$/);
    }
    // Authenticated requests describe the key window, the others the address window.
    expect(responses[200].headers['x-ratelimit-limit']).toBe('100');
    expect(responses[422].headers['x-ratelimit-limit']).toBe('100');
    expect(responses[401].headers['x-ratelimit-limit']).toBe('300');
    expect(responses[404].headers['x-ratelimit-limit']).toBe('300');
  });

  it('suspends a key after 10 requests sent before their Retry-After in 10 minutes, for 15 minutes', async () => {
    const t = await h.tenant();
    const call = caller(t, newIp());
    await send(20, call, 0);
    // The first refusal tells the wait; the ten after it, sent at once, come before it ends.
    const refused = await send(11, call, 0);
    refused.forEach((r) => expect429(r, 'RATE_LIMIT_EXCEEDED', 1));
    vi.advanceTimersByTime(2000);
    // The burst window is over, but the key is suspended.
    const suspended = await call();
    const wait = expect429(suspended, 'ACCESS_SUSPENDED', 900);
    expect(wait).toBeGreaterThan(890);
    expect(suspended.json().error.message).toMatch(/suspended/i);
    // Another key from the same address is not suspended.
    expect((await caller(await h.tenant(), newIp())()).statusCode).toBe(200);
    vi.advanceTimersByTime(wait * 1000);
    expect((await call()).statusCode).toBe(200);
  });

  it('changes nothing when it refuses a write', async () => {
    const t = await h.tenant();
    const ip = newIp();
    const extend = () =>
      h.app.inject({
        method: 'PATCH',
        url: `${t.base}/memberships/extend`,
        remoteAddress: ip,
        headers: t.headers,
        payload: { extend: future(10).iso },
      });
    // All at once: the burst window is 1 s of real time for the in-memory limiter's own timers,
    // which a sequence of bulk extends on a loaded machine could outlast.
    const results = await Promise.all(Array.from({ length: 21 }, extend));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(20);
    const refused = results.filter((r) => r.statusCode !== 200);
    expect(refused).toHaveLength(1);
    expect429(refused[0]!, 'RATE_LIMIT_EXCEEDED', 1);
    const { eventRows } = await import('../support/api.js');
    expect((await eventRows(h, t.projectId)).length).toBe(20);
  });
});
