import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { createTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetGet } from '../support/operations.catalogue.js';

describe(`${targetGet.name}: errors`, () => {
  const h = useHarness();

  async function get(t: Tenant, targetId: string) {
    const path = `${t.base}/targets/${targetId}`;
    return { res: await t.request({ method: 'GET', url: path }), path };
  }

  it('answers 404 "Target not found" for an id no target has', async () => {
    const t = await h.tenant();
    const { res, path } = await get(t, randomUUID());
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Target not found' });
  });

  it("answers 404 for another project's target", async () => {
    const t = await h.tenant();
    const theirs = await createTarget(await h.tenant());
    const { res, path } = await get(t, theirs.target_id);
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Target not found' });
  });

  it('answers 404 for a deleted target', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    await t.request({ method: 'DELETE', url: `${t.base}/targets/${target.target_id}` });
    const { res, path } = await get(t, target.target_id);
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Target not found' });
  });

  it.each(['gold', '123', `${randomUUID()}0`])('answers 422 for the target id %s, not a UUID', async (id) => {
    const t = await h.tenant();
    const { res, path } = await get(t, id);
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'target_id must be a UUID' });
  });
});
