import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess } from '../support/api.js';
import { createTarget, getTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetBatchUpdate } from '../support/operations.catalogue.js';

describe(`${targetBatchUpdate.name}: happy`, () => {
  const h = useHarness();

  async function patch(t: Tenant, payload: object) {
    const path = `${t.base}/targets`;
    return { res: await t.request({ method: 'PATCH', url: path, payload }), path };
  }

  it('updates every target listed: total N, "Successfully updated N target(s)", data in the order sent', async () => {
    const t = await h.tenant();
    const [a, b, c] = [await createTarget(t), await createTarget(t), await createTarget(t)];
    const { res, path } = await patch(t, [
      { target_id: c.target_id, is_enabled: false },
      { target_id: a.target_id, target_name: 'Alpha' },
      { target_id: b.target_id, target_name: 'Beta', is_enabled: false },
    ]);
    const want = [
      { ...c, is_enabled: false },
      { ...a, target_name: 'Alpha' },
      { ...b, target_name: 'Beta', is_enabled: false },
    ];
    expectSuccess(res, { method: 'PATCH', path, total: 3, message: 'Successfully updated 3 target(s)', data: want });
    for (const target of want) expect(await getTarget(t, target.target_id)).toStrictEqual(target);
  });

  it('writes one target.updated event per target, in the order sent', async () => {
    const t = await h.tenant();
    const [a, b] = [await createTarget(t), await createTarget(t)];
    const { res } = await patch(t, [
      { target_id: b.target_id, is_enabled: false },
      { target_id: a.target_id, is_enabled: false },
    ]);
    const updates = (await eventRows(h, t.projectId)).filter((e) => e.type === 'target.updated');
    expect(updates.map((e) => e.data)).toStrictEqual(res.json().data.map((target: unknown) => ({ target })));
    expect(updates.map((e) => (e.data.target as { target_id: string }).target_id)).toStrictEqual([b.target_id, a.target_id]);
  });

  it('leaves targets not listed alone', async () => {
    const t = await h.tenant();
    const [a, untouched] = [await createTarget(t), await createTarget(t)];
    await patch(t, [{ target_id: a.target_id, is_enabled: false }]);
    expect(await getTarget(t, untouched.target_id)).toStrictEqual(untouched);
  });

  it('takes a batch of one, and of 100', async () => {
    const t = await h.tenant();
    const one = await createTarget(t);
    const single = await patch(t, [{ target_id: one.target_id, target_name: 'Solo' }]);
    expectSuccess(single.res, {
      method: 'PATCH',
      path: single.path,
      total: 1,
      message: 'Successfully updated 1 target(s)',
      data: [{ ...one, target_name: 'Solo' }],
    });
    const many = [];
    for (let i = 0; i < 99; i++) many.push(await createTarget(t));
    const { res } = await patch(t, [one, ...many].map((x) => ({ target_id: x.target_id, is_enabled: false })));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ total: 100, message: 'Successfully updated 100 target(s)' });
  });

  it('accepts target ids in upper case', async () => {
    const t = await h.tenant();
    const a = await createTarget(t);
    const { res } = await patch(t, [{ target_id: a.target_id.toUpperCase(), is_enabled: false }]);
    expect(res.json().data, res.body).toStrictEqual([{ ...a, is_enabled: false }]);
  });
});
