import { describe, expect, it } from 'vitest';
import { expectRefusal, forEachCase, projectState } from '../support/api.js';
import { useHarness, userId, type Tenant } from '../support/harness.js';

const path = (t: Tenant, user: string) => `${t.base}/users/${user}/invoicing`;
const ADDRESS = { line1: 'Hauptstraße 1', city: 'Berlin', country: 'DE' };

describe('PATCH /v2/projects/{project_id}/users/{user_id}/invoicing: errors', () => {
  const h = useHarness();

  it('refuses every bad change with a 422 naming the field, and changes nothing', async () => {
    const t = await h.tenant();
    const user = userId();
    await t.request({ method: 'PATCH', url: path(t, user), payload: { name: 'Ada', vat_id: 'DE123456789' } });
    const before = await projectState(h, t.projectId);
    await forEachCase(
      [
        ['an empty body', [{}, /send at least one of name, company, address, vat_id/]],
        ['only a field the API does not know', [{ email: 'a@b.c' }, 'send at least one of name, company, address, vat_id']],
        ['an empty name', [{ name: '' }, 'name must be 1 to 200 characters of text (or null to remove it)']],
        ['a blank name', [{ name: '   ' }, 'name must be 1 to 200 characters of text (or null to remove it)']],
        ['a name with a control character', [{ name: 'Ada\u0007' }, 'name must be 1 to 200 characters of text (or null to remove it)']],
        ['a name with NUL', [{ name: 'Ada\u0000' }, /name must not contain NUL/]],
        ['a name of 201 characters', [{ name: 'a'.repeat(201) }, 'name must be 1 to 200 characters of text (or null to remove it)']],
        ['a company of 151 characters', [{ company: 'c'.repeat(151) }, 'company must be 1 to 150 characters of text (or null to remove it)']],
        ['a number for a name', [{ name: 42 }, /name must be 1 to 200 characters/]],
        ['a VAT id in lower case', [{ vat_id: 'de123456789' }, 'vat_id must be a VAT number with its country prefix, upper-case, without spaces (e.g. DE123456789)']],
        ['a VAT id with spaces', [{ vat_id: 'DE 123 456 789' }, 'vat_id must be a VAT number with its country prefix, upper-case, without spaces (e.g. DE123456789)']],
        ['a VAT id without a country', [{ vat_id: '123456789' }, 'vat_id must be a VAT number with its country prefix, upper-case, without spaces (e.g. DE123456789)']],
        ['an address without city', [{ address: { line1: 'x', country: 'DE' } }, /city/]],
        ['an address with a lower-case country', [{ address: { ...ADDRESS, country: 'de' } }, 'address.country must be an ISO 3166-1 alpha-2 country code, upper-case (e.g. DE)']],
        ['an address with a country name', [{ address: { ...ADDRESS, country: 'Germany' } }, 'address.country must be an ISO 3166-1 alpha-2 country code, upper-case (e.g. DE)']],
        ['an address with a blank line1', [{ address: { ...ADDRESS, line1: ' ' } }, 'address.line1 must be 1 to 200 characters of text (or null to remove it)']],
        ['an address as a string', [{ address: 'Berlin' }, /address/]],
      ] as const,
      async ([payload, message]) => expectRefusal(await t.request({ method: 'PATCH', url: path(t, user), payload }), message),
    );
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('refuses a user id that is not digits (422) and a request without a key (401)', async () => {
    const t = await h.tenant();
    const bad = await t.request({ method: 'GET', url: path(t, 'alice') });
    expectRefusal(bad, 'user_id must be a string of digits');
    const res = await h.app.inject({ method: 'PATCH', url: path(t, userId()), payload: { name: 'Ada' } });
    expect(res.statusCode).toBe(401);
  });
});
