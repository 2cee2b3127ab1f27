import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { expectError, expectSuccess, forEachCase, projectState } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import { projectOperations } from '../support/operations.all.js';
import { pathOf, type Operation } from '../support/operations.js';

/**
 * API key scopes (docs/api-keys-settings-users.md, "Scopes: full and read keys"): a read key calls every GET route of its project and
 * nothing else (403 before validation, nothing changes), so it can neither mint nor revoke keys;
 * minting a live-updates token is a read (the token only receives events). Keys are full unless
 * created otherwise. The rows are every project route's Operation (test/support/operations.all.ts).
 * The cap on active keys: api-keys-cap.test.ts.
 */

const READ_ONLY = 'This API key is read-only; use a full key to create, change or delete anything';
/** Routes that are not GETs but only read: a read key may call them. */
const READS = new Set(['POST /v2/projects/{project_id}/integrations/live-updates/tokens']);

const reading = projectOperations.filter((op) => op.method === 'GET' || READS.has(op.name));
const writing = projectOperations.filter((op) => !reading.includes(op));

const h = useHarness();

/** A tenant and a read key of its project. */
async function withReadKey(): Promise<{ t: Tenant; read: { key: string; id: string; send(o: InjectOptions): ReturnType<Tenant['request']> } }> {
  const t = await h.tenant();
  const { key, metadata } = await createKey(t, 'dashboard', 'read');
  expect(metadata.scope).toBe('read');
  return {
    t,
    read: { key, id: metadata.id, send: (o) => h.app.inject({ ...o, headers: { ...o.headers, authorization: `Bearer ${key}` } }) },
  };
}

const requestOf = (op: Operation, prepared: { url: string; payload?: unknown }, payload = prepared.payload): InjectOptions => ({
  method: op.method,
  url: prepared.url,
  ...(payload === undefined ? {} : { payload: payload as object }),
});

it('splits the routes: the table has GETs a read key may call and routes it may not', () => {
  expect(reading.length).toBeGreaterThan(10);
  expect(writing.length).toBeGreaterThan(10);
  for (const name of READS) expect(projectOperations.map((op) => op.name)).toContain(name);
});

describe('A read key', () => {
  it('calls every GET route of its project (and HEAD) as a full key does', async () => {
    await forEachCase(
      reading.map((op) => [op.name, op] as const),
      async (op) => {
        const { t, read } = await withReadKey();
        const prepared = await op.prepare(h, t);
        const res = await read.send(requestOf(op, prepared));
        expect(res.statusCode, res.body).toBe(op.successStatus);
        // An export's success is the file itself; every other read answers the envelope.
        if (!op.file) expect(res.json().ok, res.body).toBe(true);
        if (op.method === 'GET') {
          const head = await read.send({ method: 'HEAD', url: prepared.url });
          expect(head.statusCode, head.body).toBe(op.successStatus);
        }
      },
    );
  });

  it('gets 403 FORBIDDEN on every other route of its project, before validation, and nothing changes', async () => {
    await forEachCase(
      writing.map((op) => [op.name, op] as const),
      async (op) => {
        const { t, read } = await withReadKey();
        const prepared = await op.prepare(h, t);
        const before = await projectState(h, t.projectId);
        const want = { status: 403, code: 'FORBIDDEN', method: op.method, path: pathOf(prepared.url), message: READ_ONLY };
        expectError(await read.send(requestOf(op, prepared)), want);
        if (op.invalidPayload !== undefined) expectError(await read.send(requestOf(op, prepared, op.invalidPayload)), want);
        expect(await projectState(h, t.projectId)).toStrictEqual(before);
        // The control: the same request with the project's full key succeeds.
        const full = await t.request(requestOf(op, prepared));
        expect(full.statusCode, full.body).toBe(op.successStatus);
      },
    );
  });

  it('can neither mint nor revoke keys, its own or the full key, whatever the body', async () => {
    const { t, read } = await withReadKey();
    const before = await projectState(h, t.projectId);
    const keys = `${t.base}/integrations/api-keys`;
    const attempts: [string, InjectOptions][] = [
      ['mint a full key', { method: 'POST', url: keys, payload: { label: 'escalate', scope: 'full' } }],
      ['mint a read key', { method: 'POST', url: keys, payload: { label: 'more budget', scope: 'read' } }],
      ['mint with an invalid body', { method: 'POST', url: keys, payload: { scope: 'admin' } }],
      ['revoke the full key', { method: 'DELETE', url: `${keys}/${t.keyId}` }],
      ['revoke itself', { method: 'DELETE', url: `${keys}/${read.id}` }],
    ];
    await forEachCase(attempts, async (request) =>
      expectError(await read.send(request), { status: 403, code: 'FORBIDDEN', method: request.method!, path: request.url as string, message: READ_ONLY }),
    );
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    const stillWorks = await read.send({ method: 'GET', url: keys });
    expect(stillWorks.statusCode, stillWorks.body).toBe(200);
  });

  it('mints a live-updates token: it only receives the project’s events', async () => {
    const { t, read } = await withReadKey();
    const res = await read.send({ method: 'POST', url: `${t.base}/integrations/live-updates/tokens` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.project_id).toBe(t.projectId);
  });

  it('of another project still gets the project-access 403 first', async () => {
    const { read } = await withReadKey();
    const victim = await h.tenant();
    const url = `${victim.base}/memberships`;
    expectError(await read.send({ method: 'GET', url }), {
      status: 403,
      code: 'FORBIDDEN',
      method: 'GET',
      path: url,
      message: 'This API key does not have access to this project',
    });
  });
});

describe('A full key', () => {
  it('mints read and full keys, and the scope shows in the answer, the list and the revocation', async () => {
    const t = await h.tenant();
    const read = await createKey(t, 'reporting', 'read');
    const full = await createKey(t, 'deploys', 'full');
    const unsaid = await createKey(t, 'default');
    expect([read.metadata.scope, full.metadata.scope, unsaid.metadata.scope]).toStrictEqual(['read', 'full', 'full']);

    const list = await t.request({ method: 'GET', url: `${t.base}/integrations/api-keys` });
    expectSuccess(list, {
      method: 'GET',
      path: `${t.base}/integrations/api-keys`,
      total: 4,
      message: 'API keys retrieved successfully',
      data: { keys: [unsaid.metadata, full.metadata, read.metadata, expect.objectContaining({ id: t.keyId, scope: 'full' })] },
    });

    const revoked = await t.request({ method: 'DELETE', url: `${t.base}/integrations/api-keys/${read.metadata.id}` });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().data).toMatchObject({ id: read.metadata.id, scope: 'read', revoked_by: t.keyId });
    const gone = await h.app.inject({ method: 'GET', url: `${t.base}/users`, headers: { authorization: `Bearer ${read.key}` } });
    expectError(gone, { status: 401, code: 'UNAUTHORIZED', method: 'GET', path: `${t.base}/users` });
  });

  it('minted by another full key can revoke keys', async () => {
    const t = await h.tenant();
    const second = await createKey(t, 'second full');
    const res = await h.app.inject({
      method: 'DELETE',
      url: `${t.base}/integrations/api-keys/${t.keyId}`,
      headers: { authorization: `Bearer ${second.key}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ id: t.keyId, scope: 'full', revoked_by: second.metadata.id });
  });

  it.each([
    ['read_only', 'read_only'],
    ['admin', 'admin'],
    ['upper case', 'FULL'],
    ['empty', ''],
    ['null', null],
    ['a number', 1],
    ['an array', ['read']],
  ])('answers 422 naming the scopes for a scope that is %s; no key is issued', async (_what, scope) => {
    const t = await h.tenant();
    const path = `${t.base}/integrations/api-keys`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'POST', url: path, payload: { label: 'x', scope } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: 'scope must be one of: full, read' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('cannot revoke the project’s last active full key while only read keys remain (409, nothing changes)', async () => {
    const { t, read } = await withReadKey();
    const path = `${t.base}/integrations/api-keys/${t.keyId}`;
    const before = await projectState(h, t.projectId);
    expectError(await t.request({ method: 'DELETE', url: path }), {
      status: 409,
      code: 'CONFLICT',
      method: 'DELETE',
      path,
      message: "Cannot revoke the project's last active full API key; create another full key first",
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    // The read key is revocable: the full key stays.
    const res = await t.request({ method: 'DELETE', url: `${t.base}/integrations/api-keys/${read.id}` });
    expect(res.statusCode, res.body).toBe(200);
  });
});
