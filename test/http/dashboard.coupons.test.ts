import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * The dashboard's coupons page (docs/dashboard-settings.md): created and changed through
 * CouponsService after the API's body schemas, refusals shown with nothing changed, deletion
 * confirmed, each change audited, and each action refused without its permission.
 */
describe('dashboard coupons page', () => {
  const h = useHarness();
  const couponsOf = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/coupons` })).json().data as { coupon_id: string; code: string; amount: number; plan_scope: string; plan_ids: string[]; max_uses: number | null; expires_at: string | null; auto_apply: boolean }[];
  const COUPON = { code: 'SPRING25', coupon_type: 'percentage', amount: '25', currency: '', renewal_constraint: 'first_payment', renewal_months: '', invitee_mode: 'any', max_uses: '100', expires_at: '2036-06-01' };

  it('creates a coupon, changes what a PATCH may change, deletes it after a confirmation; all audited', async () => {
    const t = await h.tenant();
    const plan = (await t.request({ method: 'POST', url: `${t.base}/plans`, payload: { plan_name: 'Gold', plan_price: '9.99', plan_duration: '1 month' } })).json().data as { plan_id: string };
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    expect((await b.get(`${p}/coupons`)).body).toContain('Create a coupon');
    const made = await b.post(`${p}/coupons/create`, COUPON);
    expect(made.statusCode, made.body).toBe(303);
    const [coupon] = await couponsOf(t);
    expect(coupon).toMatchObject({ code: 'SPRING25', amount: 25, plan_scope: 'all', max_uses: 100, expires_at: '2036-06-01T00:00:00.000Z', auto_apply: false });
    expect((await b.get(`${p}/coupons`)).body).toContain('25% off');

    await b.get(`${p}/coupons/${coupon!.coupon_id}`);
    const saved = await b.post(`${p}/coupons/${coupon!.coupon_id}/update`, { code: 'SPRING30', invitee_mode: 'new_members', max_uses: '', expires_at: '', auto_apply: 'on', plan_ids: [plan.plan_id] });
    expect(saved.statusCode, saved.body).toBe(303);
    expect((await couponsOf(t))[0]).toMatchObject({ code: 'SPRING30', plan_scope: 'selected', plan_ids: [plan.plan_id], max_uses: null, expires_at: null, auto_apply: true });

    expect((await b.get(`${p}/coupons/${coupon!.coupon_id}/delete`)).body).toContain('Delete the coupon SPRING30?');
    expect(await couponsOf(t)).toHaveLength(1);
    expect((await b.post(`${p}/coupons/${coupon!.coupon_id}/delete`)).statusCode).toBe(303);
    expect(await couponsOf(t)).toStrictEqual([]);
    const audit = await b.get(`${p}/audit`);
    expect([...audit.body.matchAll(/<code>([a-z.-]+)<\/code>/g)].map((m) => m[1]).filter((a) => !a!.startsWith('session.'))).toStrictEqual(['coupon.delete', 'coupon.update', 'coupon.add']);
  });

  it('bad input shows the reason, keeps what was typed and changes nothing', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/coupons`);
    const code = await b.post(`${p}/coupons/create`, { ...COUPON, code: 'no spaces' });
    expect(code.statusCode).toBe(422);
    expect(code.body).toContain('code must be 1 to 64 letters, digits');
    expect(code.body).toContain('value="no spaces"');
    const fixed = await b.post(`${p}/coupons/create`, { ...COUPON, coupon_type: 'fixed', amount: '500' });
    expect(fixed.statusCode).toBe(422);
    expect(fixed.body).toMatch(/class="error" role="alert">[^<]*currency/);
    const percent = await b.post(`${p}/coupons/create`, { ...COUPON, amount: '150' });
    expect(percent.statusCode).toBe(422);
    expect(await couponsOf(t)).toStrictEqual([]);
    await b.post(`${p}/coupons/create`, COUPON);
    const [coupon] = await couponsOf(t);
    const badUses = await b.post(`${p}/coupons/${coupon!.coupon_id}/update`, { code: 'SPRING25', invitee_mode: 'any', max_uses: 'lots', expires_at: '' });
    expect(badUses.statusCode).toBe(422);
    expect(badUses.body).toContain('max_uses must be an integer');
    expect((await couponsOf(t))[0]).toMatchObject({ max_uses: 100 });
  });

  it('an admin with coupons:read alone sees no form, and direct POSTs with a valid token are 403', async () => {
    const t = await h.tenant();
    const owner = new DashboardBrowser(h);
    await owner.signIn(t);
    await owner.get(`/dashboard/${t.projectId}/coupons`);
    await owner.post(`/dashboard/${t.projectId}/coupons/create`, COUPON);
    const [coupon] = await couponsOf(t);
    const b = new DashboardBrowser(h);
    await b.signIn(t, (await createAdmin(t, ['coupons:read'])).user_id);
    const p = `/dashboard/${t.projectId}`;
    const page = await b.get(`${p}/coupons`);
    expect(page.body).toContain('SPRING25');
    expect(page.body).not.toContain('Create coupon');
    expect((await b.get(`${p}/coupons/${coupon!.coupon_id}`)).body).not.toContain('Save coupon');
    for (const [url, body] of [
      [`${p}/coupons/create`, { ...COUPON, code: 'OTHER' }],
      [`${p}/coupons/${coupon!.coupon_id}/update`, { code: 'HACKED' }],
      [`${p}/coupons/${coupon!.coupon_id}/delete`, {}],
    ] as const) {
      const res = await b.post(url, body);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('This needs the permission coupons:');
    }
    expect(await couponsOf(t)).toMatchObject([{ code: 'SPRING25' }]);
  });
});
