import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { createPlan } from '../support/catalogue.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { useHarness } from '../support/harness.js';

/** The overview's figures (docs/dashboard.md, "Overview"): active members, those ending within 7 days, plans, admins. */
describe('dashboard overview', () => {
  const h = useHarness();

  it('counts active memberships, those ending within 7 days, plans and admins of this project only', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const day = 86_400_000;
    const member = async (tenant: typeof t, id: string, endsInDays: number) => {
      const res = await tenant.request({ method: 'POST', url: `${tenant.base}/memberships`, payload: { user_id: id, end_date: new Date(Date.now() + endsInDays * day).toISOString() } });
      expect(res.statusCode, res.body).toBe(201);
    };
    await member(t, '100000000000000001', 3);
    await member(t, '100000000000000002', 30);
    await member(t, '100000000000000003', 6);
    await member(other, '100000000000000004', 2);
    await createPlan(t, { plan_name: 'Gold', plan_price: '10', plan_duration: '30 days' });
    await createAdmin(t, ['admins:read']);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const page = await b.get(`/dashboard/${t.projectId}`);
    const figure = (label: string) => new RegExp(`<dt>${label}</dt><dd>([^<]+)</dd>`).exec(page.body)?.[1];
    // createAdmin made a fourth member of the project (its user is seen through a membership).
    expect(figure('Active members')).toBe('4');
    expect(figure('Ending in 7 days')).toBe('2');
    expect(figure('Plans')).toBe('1');
    expect(figure('Admins')).toBe('1');
  });
});
