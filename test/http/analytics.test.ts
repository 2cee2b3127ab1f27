import { describe, expect, it } from 'vitest';
import { expectRefusal, expectSuccess } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { createKey } from '../support/keys.js';

/** GET /v2/projects/{project_id}/analytics (docs/analytics.md): the envelope, the defaults, and each bad input refused by name. */
describe('GET /v2/projects/{project_id}/analytics', () => {
  const h = useHarness();
  const DAY = 86_400_000;
  const endOfToday = () => new Date(Math.floor(Date.now() / DAY) * DAY + DAY);

  it('answers the last 30 days by day in the envelope, for a read-only key too', async () => {
    const t = await h.tenant();
    const path = `${t.base}/analytics`;
    const { key } = await createKey(t, 'reader', 'read');
    const res = await t.request({ method: 'GET', url: path, headers: { authorization: `Bearer ${key}` } });
    const to = endOfToday();
    const empty = { active_members_at_start: 0, active_members: 0, new_members: 0, churned_members: 0, churn_rate: null, mrr: [], revenue: [], failed_payments: 0, refunds_count: 0, disputes_count: 0 };
    const data = res.json().data;
    expectSuccess(res, {
      method: 'GET',
      path,
      message: 'Analytics retrieved successfully',
      data: {
        from: new Date(to.getTime() - 30 * DAY).toISOString(),
        to: to.toISOString(),
        interval: 'day',
        totals: { ...empty, mrr_by_plan: [], revenue_by_plan: [] },
        series: data.series,
      },
    });
    expect(data.series).toHaveLength(30);
    expect(data.series[0]).toStrictEqual({ start: data.from, end: new Date(to.getTime() - 29 * DAY).toISOString(), ...empty });
    expect(data.series[29].end).toBe(to.toISOString());
  });

  it('cuts a period into ISO weeks and calendar months, the first and last clipped to it', async () => {
    const t = await h.tenant();
    const weeks = await t.request({ method: 'GET', url: `${t.base}/analytics?from=2026-01-01T00:00:00.000Z&to=2026-01-15T00:00:00.000Z&interval=week` });
    expect(weeks.statusCode, weeks.body).toBe(200);
    expect(weeks.json().data.series.map((p: { start: string; end: string }) => [p.start.slice(0, 10), p.end.slice(0, 10)])).toStrictEqual([
      ['2026-01-01', '2026-01-05'],
      ['2026-01-05', '2026-01-12'],
      ['2026-01-12', '2026-01-15'],
    ]);
    const months = await t.request({ method: 'GET', url: `${t.base}/analytics?from=${Date.UTC(2025, 10, 15)}&to=${Date.UTC(2026, 1, 1)}&interval=month` });
    expect(months.statusCode, months.body).toBe(200);
    expect(months.json().data.series.map((p: { start: string }) => p.start.slice(0, 10))).toStrictEqual(['2025-11-15', '2025-12-01', '2026-01-01']);
  });

  it('refuses bad input with a 422 naming it', async () => {
    const t = await h.tenant();
    const to = endOfToday();
    const cases: [string, RegExp][] = [
      ['from=2026-02-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z', /^from must be before to$/],
      ['from=2026-01-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z', /^from must be before to$/],
      ['interval=year', /interval must be one of: day, week, month/],
      ['period=30d', /period/],
      ['from=2026-01-01T12:00:00.000Z&to=2026-02-01T00:00:00.000Z', /^from must be a UTC midnight/],
      ['from=2026-01-01T00:00:00.000Z&to=2026-02-01T00:00:01.000Z', /^to must be a UTC midnight/],
      [`to=${new Date(to.getTime() + DAY).toISOString()}`, /^to must not be after the end of today/],
      ['from=yesterday', /from must be 13-digit Unix milliseconds/],
      ['from=2026-02-30T00:00:00.000Z&to=2026-03-01T00:00:00.000Z', /^from is not a real calendar instant$/],
      ['from=2023-01-01T00:00:00.000Z&to=2025-01-02T00:00:00.000Z&interval=day', /more than 731 intervals of a day/],
    ];
    for (const [query, message] of cases) {
      const res = await t.request({ method: 'GET', url: `${t.base}/analytics?${query}` });
      expectRefusal(res, message);
    }
    // Two years of days is the most a view holds; by week the same period is fine.
    const twoYears = 'from=2023-01-01T00:00:00.000Z&to=2025-01-01T00:00:00.000Z';
    expect((await t.request({ method: 'GET', url: `${t.base}/analytics?${twoYears}` })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `${t.base}/analytics?from=2023-01-01T00:00:00.000Z&to=2025-01-02T00:00:00.000Z&interval=week` })).statusCode).toBe(200);
  });
});
