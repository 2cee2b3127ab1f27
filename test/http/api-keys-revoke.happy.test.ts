import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { createHarness, type Harness, type Tenant } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import { apiKeyRevoke } from '../support/operations.keys.js';

describe(`${apiKeyRevoke.name}: happy`, () => {
  let h: Harness;
  beforeAll(async () => {
    // A cache TTL far beyond any test: a refused key can only have been dropped by the revocation.
    h = await createHarness({ env: { TENURE_AUTH_CACHE_TTL_MS: '3600000' } });
  });
  afterAll(() => h.close());

  const pathFor = (t: Tenant, id: string) => `${t.base}/integrations/api-keys/${id}`;
  const listWith = (app: FastifyInstance, t: Tenant, key: string) =>
    app.inject({ method: 'GET', url: `${t.base}/integrations/api-keys`, headers: { authorization: `Bearer ${key}` } });

  it('answers 200 with the metadata, revoked_at and revoked_by (the calling key) set', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    const res = await t.request({ method: 'DELETE', url: pathFor(t, second.metadata.id) });
    const data = res.json().data;
    expect(data.revoked_at, res.body).toMatch(ISO_MS);
    expectSuccess(res, {
      method: 'DELETE',
      path: pathFor(t, second.metadata.id),
      message: 'API key revoked successfully',
      data: { ...second.metadata, revoked_at: data.revoked_at, revoked_by: t.keyId, updated_at: data.revoked_at, updated_by: t.keyId },
    });
  });

  it('stops a key that was in use (cached) on the very next request', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    expect((await listWith(h.app, t, second.key)).statusCode).toBe(200);
    await t.request({ method: 'DELETE', url: pathFor(t, second.metadata.id) });
    const res = await listWith(h.app, t, second.key);
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error, res.body).toStrictEqual({ error_code: 'UNAUTHORIZED', message: 'Invalid or revoked API key' });
  });

  it('lets a key revoke itself while another active key exists; the other keeps working', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    const res = await t.request({ method: 'DELETE', url: pathFor(t, t.keyId) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.revoked_by).toBe(t.keyId);
    expect((await listWith(h.app, t, t.key)).statusCode).toBe(401);
    expect((await listWith(h.app, t, second.key)).statusCode).toBe(200);
  });

  it('writes revoked_by as the id of the key that revoked, not the revoked one', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    const res = await h.app.inject({
      method: 'DELETE',
      url: pathFor(t, t.keyId),
      headers: { authorization: `Bearer ${second.key}` },
    });
    expect(res.json().data, res.body).toMatchObject({ id: t.keyId, revoked_by: second.metadata.id });
  });
});
