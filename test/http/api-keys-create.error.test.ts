import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { apiKeyCreate } from '../support/operations.keys.js';

describe(`${apiKeyCreate.name}: errors`, () => {
  const h = useHarness();

  const LABEL = 'label must be 1 to 200 characters';

  it.each([
    ['missing', {}, 'label is required'],
    ['empty', { label: '' }, LABEL],
    ['only spaces', { label: '   ' }, LABEL],
    ['201 characters', { label: 'x'.repeat(201) }, LABEL],
    ['a number', { label: 7 }, LABEL],
    ['null', { label: null }, LABEL],
  ])('answers 422 for a label that is %s; no key is issued', async (_what, payload, message) => {
    const t = await h.tenant();
    const path = `${t.base}/integrations/api-keys`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'POST', url: path, payload });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });
});
