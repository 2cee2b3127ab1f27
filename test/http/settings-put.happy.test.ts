import { describe, expect, it } from 'vitest';
import { UUID } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { SETTING_CASES } from '../support/keys.js';
import { settingPut } from '../support/operations.keys.js';

describe(`${settingPut.name}: happy`, () => {
  const h = useHarness();

  const put = (t: Tenant, key: string, value: unknown) => t.request({ method: 'PUT', url: `${t.base}/settings/${key}`, payload: { value } });
  const get = async (t: Tenant, key: string) => (await t.request({ method: 'GET', url: `${t.base}/settings/${key}` })).json().data[key];

  const cases = SETTING_CASES.flatMap((c) => c.valid.map((v) => [c.key, v] as [string, unknown]));

  it.each(cases)('sets %s to %j: 204 without a body, and GET shows it', async (key, value) => {
    const t = await h.tenant();
    const res = await put(t, key, value);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(await get(t, key)).toStrictEqual(value);
  });

  it('overwrites a stored value, and leaves the other settings alone', async () => {
    const t = await h.tenant();
    await put(t, 'default_currency', 'EUR');
    await put(t, 'ai_enabled', true);
    expect((await put(t, 'default_currency', 'GBP')).statusCode).toBe(204);
    expect(await get(t, 'default_currency')).toBe('GBP');
    expect(await get(t, 'ai_enabled')).toBe(true);
  });

  it('fills the policies fields left out with null', async () => {
    const t = await h.tenant();
    expect((await put(t, 'policies', { minimum_age: 21 })).statusCode).toBe(204);
    expect(await get(t, 'policies')).toStrictEqual({ terms: null, privacy: null, minimum_age: 21 });
  });
});
