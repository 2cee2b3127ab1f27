import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planDelete } from '../support/operations.catalogue.js';

describe(`${planDelete.name}: errors`, () => {
  const h = useHarness();

  async function refused(planId: (t: Tenant) => Promise<string>, want: { status: number; code: string; message: string }) {
    const t = await h.tenant();
    await createPlan(t);
    const id = await planId(t);
    const path = `${t.base}/plans/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { ...want, method: 'DELETE', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const notFound = { status: 404, code: 'NOT_FOUND', message: 'Plan not found' };

  it('answers 404 for an id no plan has', async () => {
    await refused(async () => randomUUID(), notFound);
  });

  it("answers 404 for another project's plan, which stays", async () => {
    const other = await h.tenant();
    const theirs = await createPlan(other);
    await refused(async () => theirs.plan_id, notFound);
    const res = await other.request({ method: 'GET', url: `${other.base}/plans/${theirs.plan_id}` });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('answers 404 to a second delete of the same plan', async () => {
    await refused(async (t) => {
      const plan = await createPlan(t);
      expect((await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan.plan_id}` })).statusCode).toBe(204);
      return plan.plan_id;
    }, notFound);
  });

  it('answers 422 for a plan id that is not a UUID', async () => {
    await refused(async () => 'not-a-uuid', { status: 422, code: 'VALIDATION_ERROR', message: 'plan_id must be a UUID' });
  });
});
