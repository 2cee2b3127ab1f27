import { describe, expect, it } from 'vitest';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { useHarness, userId, type Tenant } from '../support/harness.js';

const path = (t: Tenant, user: string) => `${t.base}/users/${user}/invoicing`;
const ADDRESS = { line1: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country: 'DE' };

describe('GET/PATCH /v2/projects/{project_id}/users/{user_id}/invoicing: happy', () => {
  const h = useHarness();

  it('answers all null for a member who never gave any', async () => {
    const t = await h.tenant();
    const user = userId();
    expectSuccess(await t.request({ method: 'GET', url: path(t, user) }), {
      method: 'GET',
      path: path(t, user),
      message: 'Invoicing details retrieved successfully',
      data: { user_id: user, name: null, company: null, address: null, vat_id: null, updated_at: null },
    });
  });

  it('sets the fields sent, keeps the others, and null removes one', async () => {
    const t = await h.tenant();
    const user = userId();
    const first = await t.request({ method: 'PATCH', url: path(t, user), payload: { name: 'Ada Lovelace', address: ADDRESS } });
    const full = { line1: 'Hauptstraße 1', line2: null, city: 'Berlin', postal_code: '10115', state: null, country: 'DE' };
    expectSuccess(first, {
      method: 'PATCH',
      path: path(t, user),
      message: 'Invoicing details updated successfully',
      data: { user_id: user, name: 'Ada Lovelace', company: null, address: full, vat_id: null, updated_at: expect.stringMatching(ISO_MS) },
    });
    const second = await t.request({ method: 'PATCH', url: path(t, user), payload: { company: 'Analytical Engines GmbH', vat_id: 'DE123456789' } });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().data).toMatchObject({ name: 'Ada Lovelace', company: 'Analytical Engines GmbH', address: full, vat_id: 'DE123456789' });
    // A field the API does not know is ignored, as everywhere: it is not stored either.
    const extra = await t.request({ method: 'PATCH', url: path(t, user), payload: { address: { ...ADDRESS, street: 'x' }, email: 'a@b.c' } });
    expect(extra.json().data.address).toStrictEqual(full);
    const third = await t.request({ method: 'PATCH', url: path(t, user), payload: { address: null, name: null } });
    expect(third.json().data).toMatchObject({ name: null, company: 'Analytical Engines GmbH', address: null, vat_id: 'DE123456789' });
    const read = await t.request({ method: 'GET', url: path(t, user) });
    expect(read.json().data).toStrictEqual(third.json().data);
  });

  it("keeps each project's details to itself", async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const user = userId();
    await t.request({ method: 'PATCH', url: path(t, user), payload: { name: 'Ada' } });
    expect((await other.request({ method: 'GET', url: path(other, user) })).json().data.name).toBeNull();
    // Another project's key cannot read this project's path.
    const foreign = await other.request({ method: 'GET', url: path(t, user) });
    expect([403, 404]).toContain(foreign.statusCode);
    expect(foreign.body).not.toContain('Ada');
  });
});
