import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, future, userId, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

it('extends a membership created over the API', async () => {
  const t = await h.tenant();
  const uid = userId();
  const created = await t.request({ method: 'POST', url: `${t.base}/memberships`, payload: { user_id: uid, end_date: future(1).iso } });
  expect(created.statusCode, created.body).toBe(201);
  const target = future(60).iso;
  const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${uid}/extend`, payload: { extend: target } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ ok: true, code: 200, total: 1, data: { new_end_date: target } });
});
