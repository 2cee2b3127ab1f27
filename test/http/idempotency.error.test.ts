import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { sendSuccess } from '../../src/http/envelope.js';
import { expectError, projectState } from '../support/api.js';
import { createHarness, useHarness, type Harness } from '../support/harness.js';
import { count, expectExecuted, expectReplayOf, keyRows, memberPayload, newKey, post } from '../support/idempotency.js';
import { concreteUrl, projectRoutes } from '../support/routes.js';


const KEY_RULE = 'Idempotency-Key must be 1 to 255 printable ASCII characters';
const OTHER_REQUEST = /already used with a different request/;

describe('Idempotency-Key: refusals', () => {
  const h = useHarness();

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['the empty string', ''],
    ['a tab', 'a\tb'],
    ['a non-ASCII character', 'clé'],
    ['a DEL character', 'a\u007fb'],
  ])('answers 422 for a key of %s, and nothing changes', async (_what, key) => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const before = await projectState(h, t.projectId);
    const res = await post(t, path, memberPayload(), key);
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: KEY_RULE });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
  });

  it.each([
    ['255 characters', 'k'.repeat(255)],
    ['one character', 'k'],
    ['every printable ASCII character', Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('').trim()],
  ])('accepts a key of %s', async (_what, key) => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const payload = memberPayload();
    const first = await post(t, url, payload, key);
    expectExecuted(first, 201);
    expectReplayOf(await post(t, url, payload, key), first);
  });

  it('answers 422 for the same key with another body; nothing changes and the first response stays', async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const first = await post(t, path, payload, key);
    expectExecuted(first, 201);
    const before = await projectState(h, t.projectId);
    const res = await post(t, path, memberPayload(), key);
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringMatching(OTHER_REQUEST) });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    expectReplayOf(await post(t, path, payload, key), first);
  });

  it('answers 422 for the same body with the fields in another order (bytes, not meaning, are compared)', async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const key = newKey();
    const { user_id, end_date } = memberPayload();
    const send = (body: string) =>
      t.request({ method: 'POST', url: path, payload: body, headers: { 'content-type': 'application/json', 'idempotency-key': key } });
    expectExecuted(await send(JSON.stringify({ user_id, end_date })), 201);
    const res = await send(JSON.stringify({ end_date, user_id }));
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringMatching(OTHER_REQUEST) });
  });

  it('answers 422 for the same key on another path of the project', async () => {
    const t = await h.tenant();
    const key = newKey();
    expectExecuted(await post(t, `${t.base}/integrations/webhooks`, { url: 'https://hooks.example.com/x' }, key), 200);
    const path = `${t.base}/memberships`;
    const res = await post(t, path, memberPayload(), key);
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringMatching(OTHER_REQUEST) });
    expect(await count(h, 'memberships', t.projectId)).toBe(0);
  });

  it('answers 422 for the same key on the same path with another query string', async () => {
    const t = await h.tenant();
    const hook = await post(t, `${t.base}/integrations/webhooks`, { url: 'https://hooks.example.com/q' });
    const path = `${t.base}/integrations/webhooks/${hook.json().data.id}/replay`;
    const key = newKey();
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const first = await post(t, `${path}?since=${since}`, undefined, key);
    expect(first.statusCode, first.body).toBe(202);
    const other = await post(t, `${path}?since=${new Date(Date.now() - 60_000).toISOString()}`, undefined, key);
    expectError(other, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringMatching(OTHER_REQUEST) });
    expectReplayOf(await post(t, `${path}?since=${since}`, undefined, key), first);
  });
});

describe('Idempotency-Key: a repeat while the first request is still running', () => {
  let h: Harness;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let calls = 0;
  let finish: () => void = () => undefined;
  beforeAll(async () => {
    h = await createHarness();
    // A second app on the same database with one extra POST whose handler waits for the test:
    // the only way to hold a request "in progress" on PGlite, whose one connection serialises all.
    app = await buildApp(h.container);
    app.post('/v2/projects/:project_id/idempotency-probe', async (_request, reply) => {
      calls += 1;
      await new Promise<void>((resolve) => (finish = resolve));
      return sendSuccess(reply, 201, { message: 'Probe done', data: { calls } });
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await h.close();
  });

  it('answers 409 CONFLICT to a repeat and 422 to another body, runs the handler once, then replays', async () => {
    const t = await h.tenant();
    const path = `${t.base}/idempotency-probe`;
    const key = newKey();
    const send = (payload: unknown) =>
      app.inject({ method: 'POST', url: path, payload: payload as object, headers: { ...t.headers, 'idempotency-key': key } });
    const running = send({ n: 1 });
    await vi.waitFor(() => expect(calls).toBe(1));

    const repeat = await send({ n: 1 });
    expectError(repeat, { status: 409, code: 'CONFLICT', method: 'POST', path, message: expect.stringMatching(/in progress/) });
    expect(repeat.headers['retry-after']).toBe('1');
    const other = await send({ n: 2 });
    expectError(other, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringMatching(OTHER_REQUEST) });
    expect(await keyRows(h, t.projectId)).toStrictEqual([{ key, state: 'running', response_status: null }]);

    finish();
    const first = await running;
    expectExecuted(first, 201);
    expect(first.json().data).toStrictEqual({ calls: 1 });
    expectReplayOf(await send({ n: 1 }), first);
    expect(calls).toBe(1);
  });
});

describe('Idempotency-Key: every project POST takes it, present and future', () => {
  const h = useHarness();

  it('finds the POST routes (the list below is not empty and includes the known ones)', () => {
    const posts = projectRoutes(h.app).filter((r) => r.method === 'POST').map((r) => r.url);
    expect(posts).toEqual(expect.arrayContaining(['/v2/projects/:project_id/memberships', '/v2/projects/:project_id/integrations/webhooks']));
  });

  it('only the POSTs that opted out (their answers hold a secret, which no record may keep) take no key', () => {
    const optedOut = projectRoutes(h.app).filter((r) => r.method === 'POST' && !r.idempotent).map((r) => r.url);
    expect(optedOut.sort()).toStrictEqual(['/v2/projects/:project_id/integrations/api-keys', '/v2/projects/:project_id/integrations/live-updates/tokens']);
  });

  it('every project POST that has not opted out refuses a malformed key with 422 before anything else; nothing changes', async () => {
    const posts = projectRoutes(h.app).filter((r) => r.method === 'POST' && r.idempotent);
    for (const route of posts) {
      const t = await h.tenant();
      const url = concreteUrl(route, t.projectId);
      const before = await projectState(h, t.projectId);
      const res = await post(t, url, { anything: true }, 'k'.repeat(256));
      expect(res.statusCode, `${route.url}: ${res.body}`).toBe(422);
      expect(res.json().error, route.url).toStrictEqual({ error_code: 'VALIDATION_ERROR', message: KEY_RULE });
      expect(await projectState(h, t.projectId), route.url).toStrictEqual(before);
    }
  });
});
