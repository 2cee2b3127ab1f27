import { describe, expect, it } from 'vitest';
import { expectSuccess } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import { apiKeyList } from '../support/operations.keys.js';

describe(`${apiKeyList.name}: happy`, () => {
  const h = useHarness();

  const list = (t: Tenant, query = '') => t.request({ method: 'GET', url: `${t.base}/integrations/api-keys${query}` });

  it('lists metadata only, newest first, with total; revoked keys included with revoked_at', async () => {
    const t = await h.tenant();
    const second = await createKey(t, 'second');
    const third = await createKey(t, 'third');
    const revoke = await t.request({ method: 'DELETE', url: `${t.base}/integrations/api-keys/${second.metadata.id}` });
    expect(revoke.statusCode, revoke.body).toBe(200);
    const res = await list(t);
    const keys = res.json().data.keys;
    expectSuccess(res, {
      method: 'GET',
      path: `${t.base}/integrations/api-keys`,
      total: 3,
      message: 'API keys retrieved successfully',
      data: { keys: [third.metadata, revoke.json().data, keys[2]] },
    });
    expect(keys[2]).toMatchObject({ id: t.keyId, label: 'test', revoked_at: null });
    expect(keys[1].revoked_at, res.body).toEqual(expect.any(String));
    // No secret, and no hash, in any listing.
    expect(res.body).not.toContain(third.key);
    expect(res.body).not.toMatch(/hash|tk_live_/);
  });

  it('pages with limit and offset; total stays the number of keys', async () => {
    const t = await h.tenant();
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await createKey(t, `k${i}`));
    const ids = [...made.reverse().map((k) => k.metadata.id), t.keyId];
    const seen: string[] = [];
    for (let offset = 0; offset < 5; offset += 2) {
      const res = await list(t, `?limit=2&offset=${offset}`);
      expect(res.json().total, res.body).toBe(5);
      seen.push(...res.json().data.keys.map((k: { id: string }) => k.id));
    }
    expect(seen).toStrictEqual(ids);
    const past = await list(t, '?offset=10');
    expect(past.json(), past.body).toMatchObject({ total: 5, data: { keys: [] } });
  });

  it('shows only the keys of the project', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    await createKey(b, 'of b');
    const res = await list(a);
    expect(res.json().data.keys.map((k: { id: string }) => k.id), res.body).toStrictEqual([a.keyId]);
  });
});
