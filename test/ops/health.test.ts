import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/database/db.js';
import { expectSuccess, UUID } from '../support/api.js';
import { appOn, createHarness, createTestDatabase, openUnmigratedPglite, type Harness } from '../support/harness.js';
import { freePort, startRedis, type RedisProcess } from '../support/processes.js';

/**
 * /healthz and /readyz through the real app: public, never rate limited, in the envelope, and a
 * 503 that names the failing check.
 */

const newIp = () => `10.77.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 250)}`;

/** A readiness 503: the error envelope plus every check, the failing one named in the message. */
function expectNotReady(res: { statusCode: number; body: string; json(): unknown }, failing: string) {
  expect(res.statusCode, res.body).toBe(503);
  const body = res.json() as { error: { checks: { name: string; status: string; detail: string }[]; message: string } };
  expect(body).toMatchObject({ ok: false, request_id: expect.stringMatching(UUID), method: 'GET', path: '/readyz', code: 503 });
  expect(body.error.message).toMatch(new RegExp(`^Not ready: .*${failing}`));
  expect(body.error).toMatchObject({ error_code: 'SERVICE_UNAVAILABLE' });
  expect(body.error.checks.find((c) => c.name === failing)?.status, res.body).toBe('failed');
  return body.error.checks;
}

describe('health probes', () => {
  let h: Harness;
  beforeAll(async () => {
    // Limits of one request per window: a probe that were counted would be refused at once.
    h = await createHarness({ env: { TENURE_RATE_LIMIT_IP: '1', TENURE_RATE_LIMIT_BURST: '1', TENURE_RATE_LIMIT_KEY: '1' } });
  });
  afterAll(() => h.close());

  it('GET /healthz says the process is up, without a key', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz' });
    expectSuccess(res, {
      method: 'GET',
      path: '/healthz',
      message: 'tenure is up',
      data: { status: 'up', uptime_seconds: expect.any(Number) },
    });
  });

  it('GET /readyz lists every check when ready; Redis is skipped without REDIS_URL', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz?verbose=1' });
    expectSuccess(res, {
      method: 'GET',
      path: '/readyz',
      message: 'tenure is ready',
      data: {
        status: 'ready',
        checks: [
          { name: 'database', status: 'ok', detail: 'reachable' },
          { name: 'migrations', status: 'ok', detail: 'all applied' },
          { name: 'redis', status: 'skipped', detail: expect.stringMatching(/REDIS_URL not set/) },
        ],
      },
    });
  });

  it('probes are never rate limited and carry no rate-limit headers, while API calls from the same address are', async () => {
    const ip = newIp();
    for (let i = 0; i < 5; i++) {
      for (const url of ['/healthz', '/readyz', '/metrics']) {
        const res = await h.app.inject({ method: 'GET', url, remoteAddress: ip });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
        expect(Object.keys(res.headers).filter((k) => k.startsWith('ratelimit') || k.startsWith('x-ratelimit'))).toEqual([]);
      }
    }
    const t = await h.tenant();
    const api = () => h.app.inject({ method: 'GET', url: `${t.base}/memberships`, headers: t.headers, remoteAddress: ip });
    expect((await api()).statusCode).toBe(200);
    expect((await api()).statusCode).toBe(429);
  });

  it('ignores a bad Authorization header on probes', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz', headers: { authorization: 'Bearer tk_live_nonsense' } });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('answers 405 with the envelope for another method', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/healthz' });
    expect(res.statusCode, res.body).toBe(405);
    expect(res.json()).toMatchObject({ ok: false, code: 405, error: { error_code: 'METHOD_NOT_ALLOWED' } });
  });
});

describe('readiness failures', () => {
  const config = loadConfig({ TENURE_RATE_LIMITS: 'false' });

  it('503 naming the database when it is unreachable; migrations are then not checked', async () => {
    const database = await openDatabase((await createTestDatabase()).storage);
    const { app, close } = await appOn(database, config);
    await database.close();
    try {
      const checks = expectNotReady(await app.inject({ method: 'GET', url: '/readyz' }), 'database');
      expect(checks.find((c) => c.name === 'migrations')?.status).toBe('skipped');
      // Liveness does not depend on the database.
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await close();
    }
  });

  // An unmigrated database is a fresh in-memory PGlite on either suite: the check reads the same table.
  it('503 naming the migrations, with every pending one, on a database never migrated', async () => {
    const database = await openUnmigratedPglite();
    const { app, close } = await appOn(database, config);
    try {
      const checks = expectNotReady(await app.inject({ method: 'GET', url: '/readyz' }), 'migrations');
      const journal = JSON.parse(readFileSync('drizzle/meta/_journal.json', 'utf8')) as { entries: { tag: string }[] };
      const all = journal.entries.map((e) => e.tag);
      expect(checks.find((c) => c.name === 'migrations')?.detail).toBe(`${all.length} pending: ${all.join(', ')}`);
      await database.migrate();
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await close();
      await database.close();
    }
  });

  describe('with REDIS_URL', () => {
    let redis: RedisProcess;
    beforeAll(async () => {
      redis = await startRedis(await freePort());
    });
    afterAll(() => redis?.stop());

    async function appWithRedis(url: string) {
      const database = await openDatabase((await createTestDatabase()).storage);
      const withRedis = loadConfig({ TENURE_RATE_LIMITS: 'false', REDIS_URL: url });
      const node = await appOn(database, withRedis);
      return { app: node.app, close: async () => (await node.close(), await database.close()) };
    }

    it('checks Redis when it is configured', async () => {
      const { app, close } = await appWithRedis(redis.url);
      try {
        const res = await app.inject({ method: 'GET', url: '/readyz' });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data.checks[2]).toEqual({ name: 'redis', status: 'ok', detail: 'reachable' });
      } finally {
        await close();
      }
    });

    // Redis is a soft dependency: every node loses it at once, and each still serves (limits fall
    // back to its memory), so readiness stays 200 and names what is degraded.
    it('200 degraded naming Redis when it is unreachable, without echoing its URL', async () => {
      const { app, close } = await appWithRedis(`redis://:hunter2-password@127.0.0.1:${await freePort()}`);
      try {
        const res = await app.inject({ method: 'GET', url: '/readyz' });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { message: string; data: { status: string; checks: { name: string; status: string; detail: string }[] } };
        expect(body.data.status).toBe('degraded');
        expect(body.message).toMatch(/^Ready, degraded: redis unreachable/);
        expect(body.data.checks.map((c) => [c.name, c.status])).toEqual([
          ['database', 'ok'],
          ['migrations', 'ok'],
          ['redis', 'degraded'],
        ]);
        expect(body.data.checks[2]!.detail).toMatch(/rate limits are counted in this node's memory/);
        expect(res.body).not.toContain('hunter2');
      } finally {
        await close();
      }
    });
  });
});
