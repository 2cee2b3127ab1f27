import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, future, userId, type Harness, type Tenant } from '../../../test/support/harness.js';
import { createTenureClient, parseRetryAfter, retryDelayMs, type RetryInfo, type TenureClient } from '../src/index.js';

/**
 * The typed client against a real tenure server: the app listening on a port in-process, on the
 * test storage. Calls are typed end to end (a wrong body does not compile), and a 429 is waited
 * out as its Retry-After says, then retried.
 */

async function listening(h: Harness): Promise<string> {
  return h.app.listen({ port: 0, host: '127.0.0.1' });
}

describe('createTenureClient against a real server', () => {
  let h: Harness;
  let baseUrl: string;
  let t: Tenant;
  let tenure: TenureClient;
  beforeAll(async () => {
    h = await createHarness();
    baseUrl = await listening(h);
    t = await h.tenant();
    tenure = createTenureClient({ baseUrl, apiKey: t.key });
  });
  afterAll(() => h?.close());

  it('creates, extends, lists, reads and deletes a membership with typed calls', async () => {
    const project_id = t.projectId;
    const user = userId();
    const created = await tenure.POST('/v2/projects/{project_id}/memberships', {
      params: { path: { project_id } },
      body: { user_id: user, end_date: future(10).iso },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const membership = created.data!.data;
    expect(membership.user_id).toBe(user);
    expect(membership.status).toBe('active');

    const until = future(60).iso;
    const extended = await tenure.PATCH('/v2/projects/{project_id}/memberships/{user_id}/extend', {
      params: { path: { project_id, user_id: user } },
      body: { extend: until },
    });
    expect(extended.data, JSON.stringify(extended.error)).toMatchObject({ ok: true, total: 1, data: { new_end_date: until } });

    const listed = await tenure.GET('/v2/projects/{project_id}/memberships', { params: { path: { project_id }, query: { user_id: user, limit: 5 } } });
    expect(listed.data?.total).toBe(1);
    expect(listed.data?.data.map((m) => m.membership_end_date)).toStrictEqual([until]);

    const read = await tenure.GET('/v2/projects/{project_id}/memberships/{membership_id}', {
      params: { path: { project_id, membership_id: membership.membership_id } },
    });
    expect(read.data?.data.membership_id).toBe(membership.membership_id);

    const deleted = await tenure.DELETE('/v2/projects/{project_id}/memberships/{membership_id}', {
      params: { path: { project_id, membership_id: membership.membership_id } },
    });
    expect(deleted.response.status).toBe(204);
    expect(deleted.response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    if (Date.now() < 0) {
      // Compile-time checks only: the generated types refuse what the API refuses.
      // @ts-expect-error `extend` is required
      await tenure.PATCH('/v2/projects/{project_id}/memberships/extend', { params: { path: { project_id } }, body: {} });
      // @ts-expect-error no such path
      await tenure.GET('/v2/projects/{project_id}/nothing-here', { params: { path: { project_id } } });
    }
  });

  it('types the error envelopes: 404, the two 422 shapes, 401', async () => {
    const project_id = t.projectId;
    const missing = await tenure.PATCH('/v2/projects/{project_id}/memberships/{user_id}/extend', {
      params: { path: { project_id, user_id: '1' } },
      body: { extend: future(5).ms },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ ok: false, code: 404, error: { error_code: 'NOT_FOUND' } });

    const malformed = await tenure.PATCH('/v2/projects/{project_id}/memberships/extend', { params: { path: { project_id } }, body: { extend: 123 } });
    expect(malformed.response.status).toBe(422);
    expect(malformed.error && 'errors' in malformed.error ? malformed.error.errors : []).toHaveLength(2);

    const past = await tenure.PATCH('/v2/projects/{project_id}/memberships/extend', {
      params: { path: { project_id } },
      body: { extend: '2020-01-01T00:00:00.000Z' },
    });
    expect(past.error && 'error' in past.error ? past.error.error.message : '').toContain('future');

    const stranger = createTenureClient({ baseUrl, apiKey: 'tk_live_nope' });
    const refused = await stranger.GET('/v2/projects/{project_id}/integrations/webhooks', { params: { path: { project_id } } });
    expect(refused.response.status).toBe(401);
    expect(refused.error).toMatchObject({ error: { error_code: 'UNAUTHORIZED' } });
  });
});

describe('retries', () => {
  let h: Harness;
  let baseUrl: string;
  beforeAll(async () => {
    // One request per key and second: the second of two quick requests is a 429 with Retry-After.
    h = await createHarness({ env: { TENURE_RATE_LIMIT_BURST: '1' } });
    baseUrl = await listening(h);
  });
  afterAll(() => h?.close());

  /**
   * Uses up the key's current one-second window, without retrying, and returns the 429 that says
   * so. Requests follow until one is refused, so a slow machine cannot stretch them over two windows.
   */
  async function fillWindow(t: Tenant) {
    const plain = createTenureClient({ baseUrl, apiKey: t.key, retries: 0 });
    for (let i = 0; i < 20; i++) {
      const res = await plain.GET('/v2/projects/{project_id}/integrations/webhooks', { params: { path: { project_id: t.projectId } } });
      if (res.response.status === 429) return res;
      expect(res.response.status, JSON.stringify(res.error)).toBe(200);
    }
    throw new Error('no 429 within 20 requests');
  }

  it('waits out a 429 for at least its Retry-After, then succeeds', async () => {
    const t = await h.tenant();
    const retries: RetryInfo[] = [];
    const tenure = createTenureClient({ baseUrl, apiKey: t.key, retries: 3, onRetry: (info) => retries.push(info) });
    const list = () => tenure.GET('/v2/projects/{project_id}/memberships', { params: { path: { project_id: t.projectId } } });

    await fillWindow(t);
    const second = await list();
    expect(second.response.status, JSON.stringify(second.error)).toBe(200);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    for (const r of retries) {
      expect(r).toMatchObject({ status: 429, method: 'GET' });
      expect(r.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(r.delayMs).toBeGreaterThanOrEqual(r.retryAfterSeconds! * 1000);
    }
  });

  it('retries a refused POST once it is allowed, and it acts once', async () => {
    const t = await h.tenant();
    const retries: RetryInfo[] = [];
    const tenure = createTenureClient({ baseUrl, apiKey: t.key, onRetry: (info) => retries.push(info) });
    await fillWindow(t);
    const created = await tenure.POST('/v2/projects/{project_id}/memberships', {
      params: { path: { project_id: t.projectId } },
      body: { user_id: userId(), end_date: future(3).iso },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    expect(retries.map((r) => [r.method, r.status])).toContainEqual(['POST', 429]);
    const all = await h.services.memberships.list(t.projectId, { limit: 10, offset: 0 });
    expect(all.total).toBe(1);
  });

  it('hands the 429 over, typed, when retrying is off', async () => {
    const refused = await fillWindow(await h.tenant());
    expect(refused.response.status).toBe(429);
    expect(refused.error).toMatchObject({ code: 429, error: { code: 'RATE_LIMIT_EXCEEDED' } });
    const body = refused.error;
    if (!body || !('error' in body) || !('retry_after' in body.error)) throw new Error(`not the 429 shape: ${JSON.stringify(body)}`);
    expect(refused.response.headers.get('retry-after')).toBe(String(body.error.retry_after));
  });
});

describe('retrying a 503 from a real HTTP server', () => {
  let server: Server;
  let url: string;
  const answers = [503, 503, 200];
  let served = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      const status = answers[Math.min(served++, answers.length - 1)]!;
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 503 ? { 'retry-after': '0' } : {}) });
      res.end(JSON.stringify({ ok: status === 200 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('retries 503 up to the bound, and stops there', async () => {
    served = 0;
    const healthy = createTenureClient({ baseUrl: url, apiKey: 'k', retries: 2 });
    expect((await healthy.GET('/healthz')).response.status).toBe(200);
    expect(served).toBe(3);
    served = 0;
    const impatient = createTenureClient({ baseUrl: url, apiKey: 'k', retries: 1 });
    expect((await impatient.GET('/healthz')).response.status).toBe(503);
    expect(served).toBe(2);
  });
});

describe('retry timing', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });

  it('never waits less than Retry-After, adds at most 20% jitter, backs off exponentially without it', () => {
    expect(retryDelayMs(1, 2, 500, () => 0)).toBe(2000);
    expect(retryDelayMs(1, 2, 500, () => 0.999)).toBeLessThanOrEqual(2400);
    expect(retryDelayMs(3, null, 500, () => 0.999)).toBeLessThanOrEqual(2000);
    expect(retryDelayMs(3, null, 500, () => 0.5)).toBe(1000);
  });
});
