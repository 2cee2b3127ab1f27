import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * The dashboard's plans and targets pages (docs/dashboard-settings.md): each form through
 * PlansService / TargetsService as the v2 API, refused input re-shown with the API's message and
 * nothing changed, deletions confirmed, every change audited, and each action refused without its
 * permission even when posted directly.
 */
describe('dashboard plans and targets pages', () => {
  const h = useHarness();
  const plansOf = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/plans` })).json().data as { plan_id: string; plan_name: string; plan_price: string; plan_duration: string; trial_days?: number; reminder_offsets?: string[]; plan_targets: { target_id: string }[] }[];
  const targetsOf = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/targets` })).json().data as { target_id: string; target_name: string }[];
  const PLAN = { name: 'Gold', price: '9.99', currency: 'usd', duration_count: '1', duration_unit: 'month', billing: 'recurring', trial_days: '7', reminder_offsets: '7d, 1d' };

  it('the owner creates a plan and a target, grants it, edits the plan, withdraws and deletes after confirmations; the audit log shows each', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    const page = await b.get(`${p}/plans`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Create a plan');

    const made = await b.post(`${p}/plans/create`, PLAN);
    expect(made.statusCode, made.body).toBe(303);
    const [plan] = await plansOf(t);
    expect(plan).toMatchObject({ plan_name: 'Gold', plan_price: '9.99', plan_duration: '1 month', trial_days: 7, reminder_offsets: ['7d', '1d'] });
    expect(made.headers.location).toBe(`${p}/plans/${plan!.plan_id}?notice=created`);

    const target = await b.post(`${p}/targets/create`, { target_name: 'VIP role', platform: 'discord', kind: 'role', external_id: '123456789012345678', parent_target_id: '' });
    expect(target.statusCode, target.body).toBe(303);
    const [role] = await targetsOf(t);
    expect(role).toMatchObject({ target_name: 'VIP role' });

    await b.get(`${p}/plans/${plan!.plan_id}`);
    const grant = await b.post(`${p}/plans/${plan!.plan_id}/targets`, { target_id: role!.target_id });
    expect(grant.statusCode, grant.body).toBe(303);
    expect((await plansOf(t))[0]!.plan_targets.map((x) => x.target_id)).toStrictEqual([role!.target_id]);
    expect((await b.get(`${p}/plans`)).body).toContain('VIP role · discord role');

    const edit = await b.post(`${p}/plans/${plan!.plan_id}/update`, { ...PLAN, currency: 'USD', name: 'Gold+', price: '12', trial_days: '', reminder_offsets: 'none' });
    expect(edit.statusCode, edit.body).toBe(303);
    expect((await plansOf(t))[0]).toMatchObject({ plan_name: 'Gold+', plan_price: '12.00', reminder_offsets: [] });
    expect((await plansOf(t))[0]!.trial_days).toBeUndefined();
    const same = await b.post(`${p}/plans/${plan!.plan_id}/update`, { ...PLAN, currency: 'USD', name: 'Gold+', price: '12.00', trial_days: '', reminder_offsets: 'none' });
    expect(same.headers.location).toContain('notice=unchanged');

    const confirm = await b.get(`${p}/plans/${plan!.plan_id}/targets/${role!.target_id}/remove`);
    expect(confirm.body).toContain('Stop granting VIP role with Gold+?');
    expect((await plansOf(t))[0]!.plan_targets).toHaveLength(1);
    expect((await b.post(`${p}/plans/${plan!.plan_id}/targets/${role!.target_id}/remove`)).statusCode).toBe(303);
    expect((await plansOf(t))[0]!.plan_targets).toHaveLength(0);

    const renamed = await b.post(`${p}/targets/${role!.target_id}/update`, { target_name: 'VIP', on_expiry: 'none', is_enabled: 'on' });
    expect(renamed.statusCode, renamed.body).toBe(303);
    expect((await targetsOf(t))[0]).toMatchObject({ target_name: 'VIP', on_expiry: 'none', is_enabled: true });

    expect((await b.get(`${p}/plans/${plan!.plan_id}/delete`)).body).toContain('Delete the plan Gold+?');
    expect(await plansOf(t)).toHaveLength(1);
    expect((await b.post(`${p}/plans/${plan!.plan_id}/delete`)).statusCode).toBe(303);
    expect(await plansOf(t)).toHaveLength(0);
    expect((await b.get(`${p}/targets/${role!.target_id}/delete`)).body).toContain('Delete the target VIP?');
    expect((await b.post(`${p}/targets/${role!.target_id}/delete`)).statusCode).toBe(303);
    expect(await targetsOf(t)).toHaveLength(0);

    const audit = await b.get(`${p}/audit`);
    const actions = [...audit.body.matchAll(/<code>([a-z.-]+)<\/code>/g)].map((m) => m[1]).filter((a) => !a!.startsWith('session.'));
    expect(actions).toStrictEqual(['target.delete', 'plan.delete', 'target.update', 'plan.target.remove', 'plan.update', 'plan.target.add', 'target.add', 'plan.add']);
  });

  it('bad input shows the API’s reason on the page, keeps what was typed and changes nothing', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/plans`);
    const price = await b.post(`${p}/plans/create`, { ...PLAN, price: 'ten' });
    expect(price.statusCode).toBe(422);
    expect(price.body).toContain('plan_price must be a non-negative decimal string with at most 2 fraction digits');
    expect(price.body).toContain('value="ten"');
    const currency = await b.post(`${p}/plans/create`, { ...PLAN, currency: 'XYZ' });
    expect(currency.statusCode).toBe(422);
    expect(currency.body).toContain('plan_currency XYZ is not an ISO 4217 currency code');
    const offsets = await b.post(`${p}/plans/create`, { ...PLAN, reminder_offsets: 'tomorrow' });
    expect(offsets.statusCode).toBe(422);
    const trial = await b.post(`${p}/plans/create`, { ...PLAN, trial_days: 'a week' });
    expect(trial.body).toContain('trial_days must be null or an integer from 1 to 730');
    expect(await plansOf(t)).toHaveLength(0);

    const target = await b.post(`${p}/targets/create`, { target_name: 'Role', platform: 'discord', kind: 'group', external_id: '1', parent_target_id: '' });
    expect(target.statusCode).toBe(422);
    expect(target.body).toContain('kind group does not exist on discord');
    const badId = await b.post(`${p}/targets/create`, { target_name: 'Role', platform: 'discord', kind: 'role', external_id: 'abc', parent_target_id: '' });
    expect(badId.statusCode).toBe(422);
    expect(badId.body).toContain('external_id must be the platform id');
    expect(await targetsOf(t)).toHaveLength(0);

    await b.post(`${p}/plans/create`, PLAN);
    const [plan] = await plansOf(t);
    const edit = await b.post(`${p}/plans/${plan!.plan_id}/update`, { ...PLAN, billing: 'once', duration_count: '0' });
    expect(edit.statusCode).toBe(422);
    expect(edit.body).toContain('plan_duration must read');
    expect((await plansOf(t))[0]).toMatchObject({ plan_duration: '1 month', plan_data: { plan_recurring: true } });
    const noTarget = await b.post(`${p}/plans/${plan!.plan_id}/targets`, { target_id: 'nope' });
    expect(noTarget.statusCode).toBe(422);
    expect(noTarget.body).toContain('Choose a target to add.');
    expect((await b.get(`${p}/plans/00000000-0000-4000-8000-000000000000`)).statusCode).toBe(404);
    const forged = await b.post(`${p}/plans/create`, { ...PLAN, _csrf: 'forged' });
    expect(forged.statusCode).toBe(403);
    expect(await plansOf(t)).toHaveLength(1);
  });

  it('an admin with plans:read alone sees no form, and a direct POST with a valid token is 403 and changes nothing', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['plans:read']);
    const owner = new DashboardBrowser(h);
    await owner.signIn(t);
    await owner.get(`/dashboard/${t.projectId}/plans`);
    await owner.post(`/dashboard/${t.projectId}/plans/create`, PLAN);
    const [plan] = await plansOf(t);
    const b = new DashboardBrowser(h);
    await b.signIn(t, admin.user_id);
    const p = `/dashboard/${t.projectId}`;
    const page = await b.get(`${p}/plans`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Gold');
    expect(page.body).not.toContain('Create a plan');
    const one = await b.get(`${p}/plans/${plan!.plan_id}`);
    expect(one.body).not.toContain('Save plan');
    expect(one.body).not.toContain('Delete this plan');
    expect(b.csrf).not.toBe('');
    for (const [url, body] of [
      [`${p}/plans/create`, PLAN],
      [`${p}/plans/${plan!.plan_id}/update`, { ...PLAN, name: 'Hacked' }],
      [`${p}/plans/${plan!.plan_id}/delete`, {}],
    ] as const) {
      const res = await b.post(url, body);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('This needs the permission plans:');
    }
    expect(await plansOf(t)).toMatchObject([{ plan_name: 'Gold' }]);
    const none = new DashboardBrowser(h);
    await none.signIn(t, (await createAdmin(t, ['memberships:read'])).user_id);
    expect((await none.get(`${p}/plans`)).statusCode).toBe(403);
  });
});
