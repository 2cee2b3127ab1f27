import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import { apiKeyRevoke } from '../support/operations.keys.js';

describe(`${apiKeyRevoke.name}: errors`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/integrations/api-keys/${id}`;

  /** Sends the DELETE and proves the project did not change. */
  async function refused(t: Tenant, id: string, want: { status: number; code: string; message: string }) {
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'DELETE', url: pathFor(t, id) });
    expectError(res, { ...want, method: 'DELETE', path: pathFor(t, id) });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  it('answers 422 for a key_id that is not a UUID', async () => {
    const t = await h.tenant();
    await refused(t, 'not-a-uuid', { status: 422, code: 'VALIDATION_ERROR', message: 'key_id must be a UUID' });
  });

  it('answers 404 for a key_id no key has', async () => {
    const t = await h.tenant();
    await createKey(t);
    await refused(t, randomUUID(), { status: 404, code: 'NOT_FOUND', message: 'API key not found' });
  });

  it('answers 404 for a key of another project, which stays active', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const theirs = await createKey(other);
    await refused(t, theirs.metadata.id, { status: 404, code: 'NOT_FOUND', message: 'API key not found' });
    const still = await h.app.inject({ method: 'GET', url: `${other.base}/settings`, headers: { authorization: `Bearer ${theirs.key}` } });
    expect(still.statusCode, still.body).toBe(200);
  });

  it('answers 409 for a key already revoked; revoked_at does not move', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    expect((await t.request({ method: 'DELETE', url: pathFor(t, second.metadata.id) })).statusCode).toBe(200);
    await refused(t, second.metadata.id, { status: 409, code: 'CONFLICT', message: 'API key is already revoked' });
  });

  const LAST = "Cannot revoke the project's last active API key; create another key first";

  it('answers 409 when a key would revoke itself as the last active key; it keeps working', async () => {
    const t = await h.tenant();
    await refused(t, t.keyId, { status: 409, code: 'CONFLICT', message: LAST });
    expect((await t.request({ method: 'GET', url: `${t.base}/settings` })).statusCode).toBe(200);
  });

  it('answers 409 for the last active key once the others are revoked', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    expect((await t.request({ method: 'DELETE', url: pathFor(t, second.metadata.id) })).statusCode).toBe(200);
    await refused(t, t.keyId, { status: 409, code: 'CONFLICT', message: LAST });
  });

  it('never lets two concurrent revocations leave a project without an active key', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    // Both keys in use (cached), then each revokes the other at the same moment: one may win.
    const warm = await h.app.inject({ method: 'GET', url: `${t.base}/settings`, headers: { authorization: `Bearer ${second.key}` } });
    expect(warm.statusCode, warm.body).toBe(200);
    const [a, b] = await Promise.all([
      t.request({ method: 'DELETE', url: pathFor(t, second.metadata.id) }),
      h.app.inject({ method: 'DELETE', url: pathFor(t, t.keyId), headers: { authorization: `Bearer ${second.key}` } }),
    ]);
    // The loser is refused by the rule (409), or by auth (401) when its key was already revoked.
    const statuses = [a.statusCode, b.statusCode].sort();
    expect(statuses[0], `${a.body}\n${b.body}`).toBe(200);
    expect([401, 409], `${a.body}\n${b.body}`).toContain(statuses[1]);
    const survivor = a.statusCode === 200 ? t.key : second.key;
    const list = await h.app.inject({ method: 'GET', url: `${t.base}/integrations/api-keys`, headers: { authorization: `Bearer ${survivor}` } });
    expect(list.json().data.keys.filter((k: { revoked_at: string | null }) => k.revoked_at === null), list.body).toHaveLength(1);
  });
});
