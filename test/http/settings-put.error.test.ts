import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { SETTING_CASES } from '../support/keys.js';
import { settingPut } from '../support/operations.keys.js';

describe(`${settingPut.name}: errors`, () => {
  const h = useHarness();

  async function refused(key: string, payload: unknown, want: { status: number; code: string; message: string }) {
    const t = await h.tenant();
    const path = `${t.base}/settings/${key}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PUT', url: path, payload: payload as object });
    expectError(res, { ...want, method: 'PUT', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const cases = SETTING_CASES.flatMap((c) => c.invalid.map(([v, m]) => [c.key, v, m] as [string, unknown, string]));

  it.each(cases)('answers 422 for %s = %j, naming what is expected; nothing is stored', async (key, value, message) => {
    await refused(key, { value }, { status: 422, code: 'VALIDATION_ERROR', message });
  });

  it('answers 422 when value is missing', async () => {
    await refused('ai_enabled', { enabled: true }, { status: 422, code: 'VALIDATION_ERROR', message: 'value is required' });
  });

  it('answers 404 "Setting not found" for an unknown key, whatever the value', async () => {
    await refused('dark_mode', { value: true }, { status: 404, code: 'NOT_FOUND', message: 'Setting not found: dark_mode' });
  });
});
