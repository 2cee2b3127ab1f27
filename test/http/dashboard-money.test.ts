import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { seedMoney } from '../support/dashboard-money.js';
import { useHarness } from '../support/harness.js';

/** The dashboard's money page over HTTP (docs/analytics.md): the figures and tables, its CSP, the period form's errors, payments:read, its scripts. */
describe('/dashboard/{project_id}/money', () => {
  const h = useHarness();

  it('shows the last 30 days: figures, a table per chart, escaped plan names; our two scripts and nothing inline', async () => {
    const t = await h.tenant();
    await seedMoney(h, t);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const res = await b.get(`/dashboard/${t.projectId}/money`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    const text = res.body.replace(/\s+/g, ' ');
    // Ten monthly members of 12.00 USD (one whose payment failed is still a member), five day passes ended.
    expect(text).toContain('<dt>Active members at the end</dt><dd>10</dd>');
    expect(text).toContain('<dt>New members</dt><dd>15</dd>');
    expect(text).toContain('<dt>Churned members</dt><dd>5</dd>');
    expect(text).toContain('<dt>MRR at the end</dt><dd>108.00 USD</dd>');
    expect(text).toContain('<dt>Failed payments</dt><dd>1</dd>');
    expect(text).toContain('<dt>Net revenue</dt><dd>12.00 EUR · 108.00 USD</dd>');
    for (const id of ['chart-mrr', 'chart-members', 'chart-flow', 'chart-revenue']) expect(res.body).toContain(`<table id="${id}">`);
    expect(res.body).toContain('Day pass &lt;b&gt;');
    expect(res.body).not.toContain('Day pass <b>');
    expect([...res.body.matchAll(/<script([^>]*)>/g)].map((m) => m[1])).toStrictEqual([' src="/dashboard/assets/chart.umd.js"', ' src="/dashboard/assets/money.js"']);
    for (const asset of ['chart.umd.js', 'money.js']) {
      const js = await h.app.inject({ method: 'GET', url: `/dashboard/assets/${asset}` });
      expect(js.statusCode).toBe(200);
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    }
  });

  it('a period by week; a bad period is a 422 page naming it, with the last 30 days shown', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const week = await b.get(`/dashboard/${t.projectId}/money?from=2026-01-01&to=2026-01-31&interval=week`);
    expect(week.statusCode, week.body).toBe(200);
    expect(week.body).toContain('<th scope="row">2026-01-01 – 2026-01-04</th>');
    expect(week.body).toContain('<th scope="row">2026-01-26 – 2026-01-31</th>');
    const cases: [string, string][] = [
      ['from=2026-02-01&to=2026-01-01', 'From must be on or before To.'],
      ['from=2026-02-30', 'From must be a date (YYYY-MM-DD).'],
      ['interval=hour', 'Interval must be one of: day, week, month.'],
      ['to=2999-01-01', 'To must not be after today (UTC).'],
      ['from=2020-01-01&to=2024-01-01&interval=day', 'That is more than 731 intervals of a day'],
    ];
    for (const [query, message] of cases) {
      const res = await b.get(`/dashboard/${t.projectId}/money?${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(res.body, query).toContain(message);
    }
  });

  it('needs payments:read: an admin without it gets the 403 page naming it', async () => {
    const t = await h.tenant();
    const reader = await createAdmin(t, ['memberships:read']);
    const b = new DashboardBrowser(h);
    await b.signIn(t, reader.user_id);
    const res = await b.get(`/dashboard/${t.projectId}/money`);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('payments:read');
    const payer = await createAdmin(t, ['payments:read']);
    const c = new DashboardBrowser(h);
    await c.signIn(t, payer.user_id);
    expect((await c.get(`/dashboard/${t.projectId}/money`)).statusCode).toBe(200);
  });
});
