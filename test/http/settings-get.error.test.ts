import { describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { settingGet } from '../support/operations.keys.js';

describe(`${settingGet.name}: errors`, () => {
  const h = useHarness();

  it.each(['dark_mode', 'DEFAULT_LANGUAGE', 'constructor', '__proto__', 'toString'])('answers 404 "Setting not found: %s"', async (key) => {
    const t = await h.tenant();
    const path = `${t.base}/settings/${key}`;
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: `Setting not found: ${key}` });
  });
});
