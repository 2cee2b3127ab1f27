import { describe, expect, it } from 'vitest';
import {
  createMembership,
  expectError,
  expectInstantFormatError,
  expectNotFutureError,
  expireMembership,
  failEventInserts,
  INTERNALS,
  MALFORMED_INSTANTS,
  projectState,
} from '../support/api.js';
import { future, useHarness } from '../support/harness.js';
import { extendAll } from '../support/operations.js';

describe(`${extendAll.name}: errors`, () => {
  const h = useHarness();

  /** A tenant with two memberships (one expired), the path, and the project's state before. */
  async function project() {
    const t = await h.tenant();
    await createMembership(t);
    await expireMembership(h, (await createMembership(t)).membership_id);
    const path = `${t.base}/memberships/extend`;
    return { t, path, before: await projectState(h, t.projectId) };
  }

  it.each(MALFORMED_INSTANTS)('answers the two-entry 422 for %s; nothing changes', async (_what, extend) => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend } });
    expectInstantFormatError(res, { method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['no body at all', undefined],
    ['{}', '{}'],
    ['[]', '[]'],
    ['null', 'null'],
    ['a JSON string', '"extend"'],
    ['true', 'true'],
  ])('answers the two-entry 422 for a body of %s; nothing changes', async (_what, payload) => {
    const { t, path, before } = await project();
    const res = await t.request({
      method: 'PATCH',
      url: path,
      ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }),
    });
    expectInstantFormatError(res, { method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['a past ISO string', '2001-09-09T01:46:40.000Z'],
    ['a past 13-digit number', 1_000_000_000_000],
    ['a minute ago', () => Date.now() - 60_000],
  ])('answers the error-object 422 for %s; nothing changes', async (_what, value) => {
    const { t, path, before } = await project();
    const extend = typeof value === 'function' ? value() : value;
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend } });
    expectNotFutureError(res, { method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 500 without internals and rolls the whole update back when its event cannot be written', async () => {
    const { t, path, before } = await project();
    const restore = await failEventInserts(h, t.projectId);
    try {
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend: future(90).iso } });
      expectError(res, { status: 500, code: 'INTERNAL_ERROR', method: 'PATCH', path, message: 'An unexpected error occurred' });
      expect(res.body, res.body).not.toMatch(INTERNALS);
      // The UPDATE ran before the failing INSERT: only a shared transaction undoes it.
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    } finally {
      await restore();
    }
  });
});
