import { describe, expect, it } from 'vitest';
import { onPostgres, useHarness } from '../support/harness.js';
import { activeKeys } from '../support/keys.js';

/**
 * The cap on a project's active API keys under concurrent creations (on PostgreSQL these really
 * interleave): the project row is locked before the count, so however many requests race for the
 * last places, the project never ends up with more than TENURE_MAX_KEYS_PER_PROJECT active keys and
 * every loser gets a 409, never a 500. The cap itself: test/http/api-keys-cap.test.ts.
 */

const CAP = 4;

describe(`API keys: concurrent creations at the cap (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness({ env: { TENURE_MAX_KEYS_PER_PROJECT: String(CAP) } });

  it('lets exactly the free places through; the rest get 409 and nothing more is stored', async () => {
    const t = await h.tenant();
    const mint = (i: number) =>
      t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: `racer ${i}`, scope: i % 2 ? 'read' : 'full' } });
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => mint(i)));
    for (const res of replies) expect([200, 409], res.body).toContain(res.statusCode);
    expect(replies.filter((r) => r.statusCode === 200)).toHaveLength(CAP - 1);
    expect(await activeKeys(h, t.projectId)).toBe(CAP);
  });

  it('never exceeds the cap when revocations race creations', async () => {
    const t = await h.tenant();
    const created = [];
    for (let i = 0; i < CAP - 1; i++) {
      const res = await t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: `k${i}` } });
      expect(res.statusCode, res.body).toBe(200);
      created.push(res.json().data.metadata.id as string);
    }
    const replies = await Promise.all([
      ...created.map((id) => t.request({ method: 'DELETE', url: `${t.base}/integrations/api-keys/${id}` })),
      ...Array.from({ length: 8 }, (_, i) => t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: `r${i}` } })),
    ]);
    for (const res of replies.slice(0, created.length)) expect(res.statusCode, res.body).toBe(200);
    for (const res of replies) expect([200, 409], res.body).toContain(res.statusCode);
    expect(await activeKeys(h, t.projectId)).toBeLessThanOrEqual(CAP);
  });
});
