import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createMembership,
  expectError,
  expectInstantFormatError,
  expectNotFutureError,
  failEventInserts,
  insertPlan,
  INTERNALS,
  MALFORMED_INSTANTS,
  projectState,
} from '../support/api.js';
import { future, useHarness, userId } from '../support/harness.js';
import { membershipCreate } from '../support/operations.js';

describe(`${membershipCreate.name}: errors`, () => {
  const h = useHarness();

  /** A tenant, its memberships path and its state before the request. */
  async function project() {
    const t = await h.tenant();
    await createMembership(t);
    return { t, path: `${t.base}/memberships`, before: await projectState(h, t.projectId) };
  }

  it('answers 409 CONFLICT when the user already has a membership; the first one is kept', async () => {
    const t = await h.tenant();
    const first = await createMembership(t);
    const path = `${t.base}/memberships`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: first.user_id, end_date: future(99).iso } });
    expectError(res, {
      status: 409,
      code: 'CONFLICT',
      method: 'POST',
      path,
      message: `User ${first.user_id} already has a membership in this project`,
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each(MALFORMED_INSTANTS)('answers the two-entry 422 (naming end_date) for %s; nothing changes', async (_what, end_date) => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId(), end_date } });
    expectInstantFormatError(res, { method: 'POST', path, field: 'end_date' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers the two-entry 422 when end_date is missing', async () => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId() } });
    expectInstantFormatError(res, { method: 'POST', path, field: 'end_date' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['no body at all', undefined],
    ['[]', '[]'],
    ['null', 'null'],
  ])('answers the two-entry 422 (naming end_date) for a body of %s', async (_what, payload) => {
    const { t, path, before } = await project();
    const res = await t.request({
      method: 'POST',
      url: path,
      ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }),
    });
    expectInstantFormatError(res, { method: 'POST', path, field: 'end_date' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['a past ISO string', '2020-01-01T00:00:00.000Z'],
    ['a past 13-digit number', 1_500_000_000_000],
  ])('answers the error-object 422 for %s: end_date must be a future timestamp', async (_what, end_date) => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId(), end_date } });
    expectNotFutureError(res, { method: 'POST', path, field: 'end_date' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['letters', 'abc', 'user_id must be a string of digits'],
    ['a number instead of a string', 123, 'user_id must be a string of digits'],
    ['the empty string', '', 'user_id must be a string of digits'],
    ['33 digits', '9'.repeat(33), 'user_id must be a string of digits'],
    ['digits with a space', '12 34', 'user_id must be a string of digits'],
  ])('answers 422 for a user_id of %s', async (_what, user_id, message) => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { user_id, end_date: future().iso } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 422 when user_id is missing', async () => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { end_date: future().iso } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: 'user_id is required' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 422 for a plan_id that is not a UUID', async () => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId(), end_date: future().iso, plan_id: 'gold' } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: 'plan_id must be a UUID' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['no plan has', async () => randomUUID()],
    ['belongs to another project', async () => insertPlan(h, (await h.tenant()).projectId)],
  ])('answers 404 for a plan_id that %s; nothing changes', async (_what, plan) => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId(), end_date: future().iso, plan_id: await plan() } });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'Plan not found' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 500 without internals and stores no membership when its event cannot be written', async () => {
    const { t, path, before } = await project();
    const restore = await failEventInserts(h, t.projectId);
    try {
      const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId(), end_date: future().iso } });
      expectError(res, { status: 500, code: 'INTERNAL_ERROR', method: 'POST', path, message: 'An unexpected error occurred' });
      expect(res.body, res.body).not.toMatch(INTERNALS);
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    } finally {
      await restore();
    }
  });
});
