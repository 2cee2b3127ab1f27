import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { activeKeys, createKey } from '../support/keys.js';

/**
 * The cap on a project's active API keys (TENURE_MAX_KEYS_PER_PROJECT): each key has its own
 * rate-limit budget, so minting keys must not multiply a project's limits. Revoked keys do not
 * count; the operator's CLI is not bound by it (it is the way back into a project whose keys
 * leaked). Concurrent creations at the cap, on both storages: test/storage/api-keys-cap.test.ts.
 */

const CAP = 3;
const FULL = `This project already has ${CAP} active API keys, the most it may have; revoke one first`;

describe('POST /v2/projects/{project_id}/integrations/api-keys: the cap on active keys', () => {
  const h = useHarness({ env: { TENURE_MAX_KEYS_PER_PROJECT: String(CAP) } });

  const mint = (t: Tenant, scope = 'read') =>
    t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: 'one more', scope } });

  it('answers 409 CONFLICT naming the cap for one key more, read or full; nothing is created', async () => {
    const t = await h.tenant();
    await createKey(t, 'second');
    await createKey(t, 'third', 'read');
    expect(await activeKeys(h, t.projectId)).toBe(CAP);
    const before = await projectState(h, t.projectId);
    const path = `${t.base}/integrations/api-keys`;
    for (const scope of ['read', 'full']) {
      expectError(await mint(t, scope), { status: 409, code: 'CONFLICT', method: 'POST', path, message: FULL });
    }
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('counts only active keys: revoking one makes room for one', async () => {
    const t = await h.tenant();
    const second = await createKey(t, 'second');
    await createKey(t, 'third');
    const revoked = await t.request({ method: 'DELETE', url: `${t.base}/integrations/api-keys/${second.metadata.id}` });
    expect(revoked.statusCode, revoked.body).toBe(200);
    const res = await mint(t);
    expect(res.statusCode, res.body).toBe(200);
    expect((await mint(t)).statusCode).toBe(409);
    expect(await activeKeys(h, t.projectId)).toBe(CAP);
  });

  it('is per project: another project at its cap does not hold this one back', async () => {
    const full = await h.tenant();
    await createKey(full, 'second');
    await createKey(full, 'third');
    const other = await h.tenant();
    const res = await mint(other);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('does not bind the operator: the CLI’s issuing still makes a full key at the cap', async () => {
    const t = await h.tenant();
    await createKey(t, 'second');
    await createKey(t, 'third');
    const issued = await h.services.projects.createKey(t.projectId, 'recovery', 'cli');
    if (!issued.ok) throw issued.error;
    expect(issued.value.metadata).toMatchObject({ scope: 'full', created_by: 'cli' });
    expect(await activeKeys(h, t.projectId)).toBe(CAP + 1);
    // Over the cap now, the API mints nothing until enough keys are revoked.
    expect((await mint(t)).statusCode).toBe(409);
  });
});

describe('TENURE_MAX_KEYS_PER_PROJECT by default', () => {
  const h = useHarness();

  it('is 50', () => {
    expect(h.config.auth.maxKeysPerProject).toBe(50);
  });
});
