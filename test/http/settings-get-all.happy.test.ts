import { describe, expect, it } from 'vitest';
import { expectSuccess } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { DEFAULTS } from '../support/keys.js';
import { settingsGetAll } from '../support/operations.keys.js';

describe(`${settingsGetAll.name}: happy`, () => {
  const h = useHarness();

  it('answers every setting with its documented default on a new project', async () => {
    const t = await h.tenant();
    const res = await t.request({ method: 'GET', url: `${t.base}/settings` });
    expectSuccess(res, { method: 'GET', path: `${t.base}/settings`, message: 'Settings retrieved successfully', data: DEFAULTS });
  });

  it('shows stored values over the defaults, and only for its own project', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const patch = await t.request({
      method: 'PATCH',
      url: `${t.base}/settings`,
      payload: { default_currency: 'EUR', time_format_preference: '12h', support_enabled: true },
    });
    expect(patch.statusCode, patch.body).toBe(204);
    const res = await t.request({ method: 'GET', url: `${t.base}/settings` });
    expect(res.json().data, res.body).toStrictEqual({ ...DEFAULTS, default_currency: 'EUR', time_format_preference: '12h', support_enabled: true });
    const theirs = await other.request({ method: 'GET', url: `${other.base}/settings` });
    expect(theirs.json().data, theirs.body).toStrictEqual(DEFAULTS);
  });
});
