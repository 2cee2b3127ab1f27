import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TargetView } from '../../src/domain/targets/target.view.js';
import { expectError, projectState } from '../support/api.js';
import { createTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetBatchUpdate } from '../support/operations.catalogue.js';

const BODY = 'The body must be an array of 1 to 100 target updates';

describe(`${targetBatchUpdate.name}: errors`, () => {
  const h = useHarness();

  /**
   * Sends `batch(t, [a, b, c])` for three targets of a fresh project. The batch is all or nothing:
   * the answer is the refusal, and no target, link or event of the project changed.
   */
  async function refused(
    batch: (t: Tenant, targets: TargetView[]) => Promise<unknown> | unknown,
    want: { status: number; code: string; message: string | ((targets: TargetView[]) => string) },
  ) {
    const t = await h.tenant();
    const targets = [await createTarget(t), await createTarget(t), await createTarget(t)];
    const body = await batch(t, targets);
    const path = `${t.base}/targets`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PATCH', url: path, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const message = typeof want.message === 'function' ? want.message(targets) : want.message;
    expectError(res, { ...want, message, method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const invalid = (message: string | ((targets: TargetView[]) => string)) => ({ status: 422, code: 'VALIDATION_ERROR', message });
  const disable = (x: TargetView | string) => ({ target_id: typeof x === 'string' ? x : x.target_id, is_enabled: false });

  describe('all or nothing: an id that is not a target of the project fails the whole batch', () => {
    const missing = randomUUID();

    it('answers 404 naming an unknown id in the middle; the targets before it are not changed', async () => {
      await refused((_t, [a, , c]) => [disable(a!), disable(missing), { target_id: c!.target_id, target_name: 'Nope' }], {
        status: 404,
        code: 'NOT_FOUND',
        message: `Target not found: ${missing}`,
      });
    });

    it('answers 404 naming an unknown id at the end', async () => {
      await refused((_t, targets) => [...targets.map(disable), disable(missing)], {
        status: 404,
        code: 'NOT_FOUND',
        message: `Target not found: ${missing}`,
      });
    });

    it('answers 404 naming every unknown id, in the order sent', async () => {
      const other = randomUUID();
      await refused((_t, [a]) => [disable(other), disable(a!), disable(missing)], {
        status: 404,
        code: 'NOT_FOUND',
        message: `Targets not found: ${other}, ${missing}`,
      });
    });

    it("answers 404 for another project's target, which stays as it was", async () => {
      const other = await h.tenant();
      const theirs = await createTarget(other);
      const theirsBefore = await projectState(h, other.projectId);
      await refused((_t, [a]) => [disable(a!), disable(theirs)], {
        status: 404,
        code: 'NOT_FOUND',
        message: `Target not found: ${theirs.target_id}`,
      });
      expect(await projectState(h, other.projectId)).toStrictEqual(theirsBefore);
    });

    it('answers 404 for a target deleted before the batch', async () => {
      await refused(
        async (t, [a, b]) => {
          await t.request({ method: 'DELETE', url: `${t.base}/targets/${b!.target_id}` });
          return [disable(a!), disable(b!)];
        },
        { status: 404, code: 'NOT_FOUND', message: ([, b]) => `Target not found: ${b!.target_id}` },
      );
    });
  });

  it('answers 422 naming the item that changes nothing', async () => {
    await refused((_t, [a, b]) => [disable(a!), { target_id: b!.target_id }], invalid(([, b]) => `Item 1 (target_id ${b!.target_id}) must set is_enabled, target_name or on_expiry`));
  });

  it('answers 422 naming a target listed twice', async () => {
    await refused((_t, [a, b]) => [disable(a!), disable(b!), { target_id: a!.target_id, target_name: 'Twice' }], invalid(([a]) => `Item 2: target_id ${a!.target_id} appears more than once`));
  });

  it('answers 422 for a target listed twice in different letter cases', async () => {
    await refused((_t, [a]) => [disable(a!), disable(a!.target_id.toUpperCase())], invalid(([a]) => `Item 1: target_id ${a!.target_id.toUpperCase()} appears more than once`));
  });

  it.each([
    ['an empty array', []],
    ['an object', { target_id: randomUUID(), is_enabled: false }],
    ['a string', 'all'],
    ['null', null],
  ])('answers 422 for a body that is %s', async (_what, body) => {
    await refused(() => body, invalid(BODY));
  });

  it('answers 422 for 101 items (the limit is 100)', async () => {
    await refused(() => Array.from({ length: 101 }, () => disable(randomUUID())), invalid(BODY));
  });

  it.each([
    ['a target_id that is not a UUID', { target_id: 'vip', is_enabled: false }, 'target_id must be a UUID'],
    ['no target_id', { is_enabled: false }, 'target_id is required'],
    ['a string is_enabled', { target_id: randomUUID(), is_enabled: 'no' }, 'is_enabled must be true or false'],
    ['a blank target_name', { target_id: randomUUID(), target_name: ' ' }, 'target_name must be a non-blank string of at most 200 characters'],
  ])('answers 422 for an item with %s, before looking any target up', async (_what, item, message) => {
    await refused((_t, [a]) => [disable(a!), item], invalid(message));
  });

  it('answers 422 for an item that is not an object', async () => {
    await refused((_t, [a]) => [disable(a!), 'x'], invalid('1 must be object'));
  });
});
