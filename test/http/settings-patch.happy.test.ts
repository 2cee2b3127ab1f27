import { describe, expect, it } from 'vitest';
import { useHarness, type Tenant } from '../support/harness.js';
import { DEFAULTS } from '../support/keys.js';
import { settingsPatch } from '../support/operations.keys.js';

describe(`${settingsPatch.name}: happy`, () => {
  const h = useHarness();

  const patch = (t: Tenant, payload: object) => t.request({ method: 'PATCH', url: `${t.base}/settings`, payload });
  const all = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/settings` })).json().data;

  it('sets several settings in one call: 204 without a body', async () => {
    const t = await h.tenant();
    const res = await patch(t, { default_language: 'fr', timezone_preference: 'Europe/Paris', collect_email_on_subscribe: true });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expect(await all(t)).toStrictEqual({
      ...DEFAULTS,
      default_language: 'fr',
      timezone_preference: 'Europe/Paris',
      collect_email_on_subscribe: true,
    });
  });

  it('sets every setting at once, and a later batch overwrites only what it names', async () => {
    const t = await h.tenant();
    const every = {
      default_language: 'es',
      timezone_preference: 'America/Mexico_City',
      date_format_preference: 'DD/MM/YYYY',
      time_format_preference: '12h',
      collect_email_on_subscribe: true,
      default_currency: 'MXN',
      support_enabled: true,
      ai_enabled: true,
      policies: { terms: { type: 'url', value: 'https://example.com/t' }, privacy: null, minimum_age: 13 },
      page_logo_url: 'https://cdn.example.com/logo.png',
      page_accent_color: '#3a36c9',
      reminder_offsets: ['7d', '12h'],
      quiet_hours: '22:00-07:30',
      messages: { welcome: { enabled: false, text: null }, reminder: { enabled: true, text: { en: 'Ends {end_date}', de: 'Endet {end_date}' } } },
    };
    expect((await patch(t, every)).statusCode).toBe(204);
    expect(await all(t)).toStrictEqual(every);
    expect((await patch(t, { ai_enabled: false })).statusCode).toBe(204);
    expect(await all(t)).toStrictEqual({ ...every, ai_enabled: false });
  });
});
