import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetUpdate } from '../support/operations.catalogue.js';

describe(`${targetUpdate.name}: errors`, () => {
  const h = useHarness();

  /** PATCHes a target of a fresh project (or `targetId`); checks the answer and that nothing changed. */
  async function refused(
    payload: unknown,
    want: { status: number; code: string; message: string | ((id: string) => string) },
    targetId?: (t: Tenant) => Promise<string>,
  ) {
    const t = await h.tenant();
    const target = await createTarget(t);
    const id = targetId ? await targetId(t) : target.target_id;
    const path = `${t.base}/targets/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PATCH', url: path, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
    const message = typeof want.message === 'function' ? want.message(id) : want.message;
    expectError(res, { ...want, message, method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const invalid = (message: string) => ({ status: 422, code: 'VALIDATION_ERROR', message });

  it.each([
    ['an empty object', {}],
    ['only unknown fields', { platform: 'telegram' }],
  ])('answers 422 for %s: nothing to change', async (_what, body) => {
    await refused(body, invalid('Provide is_enabled, target_name or on_expiry'));
  });

  it.each([
    [{ is_enabled: 'false' }, 'is_enabled must be true or false'],
    [{ is_enabled: null }, 'is_enabled must be true or false'],
    [{ target_name: '' }, 'target_name must be a non-blank string of at most 200 characters'],
    [{ target_name: 'x'.repeat(201) }, 'target_name must be a non-blank string of at most 200 characters'],
    [{ target_name: 'ok', is_enabled: 0 }, 'is_enabled must be true or false'],
  ])('answers 422 for %j', async (body, message) => {
    await refused(body, invalid(message));
  });

  it('answers 422 for a body that is an array (the batch lives on /targets)', async () => {
    await refused([{ is_enabled: false }], invalid('body must be object'));
  });

  it.each([
    ['an id no target has', async () => randomUUID()],
    ["another project's target", async () => (await createTarget(await h.tenant())).target_id],
  ])('answers 404 naming %s', async (_what, targetId) => {
    await refused({ is_enabled: false }, { status: 404, code: 'NOT_FOUND', message: (id) => `Target not found: ${id}` }, targetId);
  });

  it('answers 422 for a target id that is not a UUID', async () => {
    await refused({ is_enabled: false }, invalid('target_id must be a UUID'), async () => 'vip');
  });
});
