import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { settingsPatch } from '../support/operations.keys.js';

describe(`${settingsPatch.name}: errors`, () => {
  const h = useHarness();

  /** A project with one stored setting, its path and its state. */
  async function project() {
    const t = await h.tenant();
    const path = `${t.base}/settings`;
    const seeded = await t.request({ method: 'PATCH', url: path, payload: { default_currency: 'EUR' } });
    expect(seeded.statusCode, seeded.body).toBe(204);
    return { t, path, before: await projectState(h, t.projectId) };
  }

  it('refuses the whole batch with one errors entry per offending key, in body order; nothing changes', async () => {
    const { t, path, before } = await project();
    const res = await t.request({
      method: 'PATCH',
      url: path,
      payload: { ai_enabled: true, dark_mode: true, default_currency: 'euro', default_language: 'de', time_format_preference: 'noon' },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json(), res.body).toStrictEqual({
      ok: false,
      request_id: res.headers['x-request-id'],
      method: 'PATCH',
      path,
      code: 422,
      errors: [
        { message: 'Unknown setting: dark_mode', error_code: 'VALIDATION_ERROR' },
        { message: 'default_currency must be an ISO 4217 currency code (USD, EUR)', error_code: 'VALIDATION_ERROR' },
        { message: 'time_format_preference must be one of 24h, 12h', error_code: 'VALIDATION_ERROR' },
      ],
    });
    // The valid keys of the refused batch (ai_enabled, default_language) were not applied either.
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    const all = (await t.request({ method: 'GET', url: path })).json().data;
    expect(all).toMatchObject({ ai_enabled: false, default_language: 'en', default_currency: 'EUR' });
  });

  it('uses the same errors shape for a single offending key', async () => {
    const { t, path, before } = await project();
    const res = await t.request({ method: 'PATCH', url: path, payload: { policies: { minimum_age: 'adult' } } });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().errors, res.body).toStrictEqual([
      { message: 'policies.minimum_age must be null or an integer from 0 to 120', error_code: 'VALIDATION_ERROR' },
    ]);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it.each([
    ['an empty object', {}, 'body must name at least one setting'],
    ['an array', [{ ai_enabled: true }], 'body must be object'],
    ['a string', 'ai_enabled', 'body must be object'],
  ])('answers 422 for a body that is %s', async (_what, payload, message) => {
    const { t, path, before } = await project();
    const res = await t.request({
      method: 'PATCH',
      url: path,
      payload: JSON.stringify(payload),
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'PATCH', path, message });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 400 to malformed JSON and 415 to another media type; nothing changes', async () => {
    const { t, path, before } = await project();
    const broken = await t.request({ method: 'PATCH', url: path, payload: '{"ai_enabled": ', headers: { 'content-type': 'application/json' } });
    expectError(broken, { status: 400, code: 'BAD_REQUEST', method: 'PATCH', path, message: 'Malformed JSON in request body' });
    const text = await t.request({ method: 'PATCH', url: path, payload: 'ai_enabled=true', headers: { 'content-type': 'text/plain' } });
    expectError(text, { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 401, then 403, before looking at an invalid body', async () => {
    const { t, path, before } = await project();
    const other = await h.tenant();
    const payload = { dark_mode: true };
    const anonymous = await h.app.inject({ method: 'PATCH', url: path, payload });
    expectError(anonymous, { status: 401, code: 'UNAUTHORIZED', method: 'PATCH', path });
    const foreign = await other.request({ method: 'PATCH', url: path, payload });
    expectError(foreign, { status: 403, code: 'FORBIDDEN', method: 'PATCH', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });
});
