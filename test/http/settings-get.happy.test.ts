import { describe, expect, it } from 'vitest';
import { expectSuccess } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { DEFAULTS } from '../support/keys.js';
import { settingGet } from '../support/operations.keys.js';

describe(`${settingGet.name}: happy`, () => {
  const h = useHarness();

  it.each(Object.entries(DEFAULTS))('answers {%s: <default>} on a new project', async (key, value) => {
    const t = await h.tenant();
    const path = `${t.base}/settings/${key}`;
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: 'Setting retrieved successfully', data: { [key]: value } });
  });

  it('answers the stored value after a PUT', async () => {
    const t = await h.tenant();
    const path = `${t.base}/settings/policies`;
    const value = { terms: { type: 'url', value: 'https://example.com/terms' }, privacy: null, minimum_age: 16 };
    const put = await t.request({ method: 'PUT', url: path, payload: { value } });
    expect(put.statusCode, put.body).toBe(204);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: 'Setting retrieved successfully', data: { policies: value } });
  });
});
