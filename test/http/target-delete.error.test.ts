import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetDelete } from '../support/operations.catalogue.js';

describe(`${targetDelete.name}: errors`, () => {
  const h = useHarness();

  async function refused(targetId: (t: Tenant) => Promise<string>, want: { status: number; code: string; message: string | ((id: string) => string) }) {
    const t = await h.tenant();
    await createTarget(t);
    const id = await targetId(t);
    const path = `${t.base}/targets/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'DELETE', url: path });
    const message = typeof want.message === 'function' ? want.message(id) : want.message;
    expectError(res, { ...want, message, method: 'DELETE', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const notFound = { status: 404, code: 'NOT_FOUND', message: 'Target not found' };

  it('answers 404 for an id no target has', async () => {
    await refused(async () => randomUUID(), notFound);
  });

  it("answers 404 for another project's target, which stays", async () => {
    const other = await h.tenant();
    const theirs = await createTarget(other);
    await refused(async () => theirs.target_id, notFound);
    const res = await other.request({ method: 'GET', url: `${other.base}/targets/${theirs.target_id}` });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('answers 404 to a second delete', async () => {
    await refused(async (t) => {
      const target = await createTarget(t);
      expect((await t.request({ method: 'DELETE', url: `${t.base}/targets/${target.target_id}` })).statusCode).toBe(204);
      return target.target_id;
    }, notFound);
  });

  it('answers 409 CONFLICT for a target that is the parent of others; both stay', async () => {
    await refused(
      async (t) => {
        const guild = await createTarget(t, { kind: 'guild' });
        await createTarget(t, { parent_target_id: guild.target_id });
        return guild.target_id;
      },
      { status: 409, code: 'CONFLICT', message: (id) => `Target ${id} is the parent of other targets; delete them first` },
    );
  });

  it('answers 422 for a target id that is not a UUID', async () => {
    await refused(async () => 'guild', { status: 422, code: 'VALIDATION_ERROR', message: 'target_id must be a UUID' });
  });
});
