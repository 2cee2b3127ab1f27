import type { AnalyticsView, Money } from '../../domain/analytics/analytics.view.js';

/**
 * The money page's data (src/http/dashboard/money.pages.ts): the analytics answer as the template's
 * figures and tables. Each chart is drawn from its table by assets/money.js, so a table holds the
 * numbers of its chart exactly, in `data-value` (the cell's text is the same number formatted).
 */

export interface ChartTable {
  id: string;
  /** line | bar: what money.js draws. */
  kind: 'line' | 'bar';
  title: string;
  /** What the canvas says to a screen reader; the table follows it. */
  description: string;
  columns: string[];
  rows: { label: string; cells: { text: string; value: number }[] }[];
}

const DAY = 86_400_000;
const int = (n: number) => n.toLocaleString('en-US');
const percent = (r: number | null) => (r === null ? '–' : `${(r * 100).toFixed(1)} %`);
const amounts = (list: Money[]) => (list.length === 0 ? '0' : list.map((m) => `${m.amount} ${m.currency}`).join(' · '));

/** `2026-01-05` for a day, `2026-01-05 – 2026-01-11` for a longer interval (its last day shown, not the next one's start). */
function intervalLabel(start: string, end: string): string {
  const first = start.slice(0, 10);
  const last = new Date(Date.parse(end) - DAY).toISOString().slice(0, 10);
  return first === last ? first : `${first} – ${last}`;
}

export function moneyPageData(v: AnalyticsView) {
  const currencies = [...new Set(v.series.flatMap((p) => [...p.mrr.map((m) => m.currency), ...p.revenue.map((r) => r.currency)]).concat(v.totals.mrr.map((m) => m.currency)))].sort();
  const labels = v.series.map((p) => intervalLabel(p.start, p.end));
  const decimalOf = (list: { currency: string; amount: string }[], c: string) => list.find((m) => m.currency === c)?.amount ?? '0';
  const netOf = (p: (typeof v.series)[number], c: string) => p.revenue.find((r) => r.currency === c);
  const tables: ChartTable[] = [
    {
      id: 'chart-mrr',
      kind: 'line',
      title: 'MRR at the end of each interval',
      description: 'Line chart of MRR at the end of each interval, one line per currency.',
      columns: currencies.map((c) => `MRR (${c})`),
      rows: v.series.map((p, i) => ({
        label: labels[i]!,
        cells: currencies.map((c) => ({ text: decimalOf(p.mrr, c), value: Number(decimalOf(p.mrr, c)) })),
      })),
    },
    {
      id: 'chart-members',
      kind: 'line',
      title: 'Active members at the end of each interval',
      description: 'Line chart of the members active at the end of each interval.',
      columns: ['Active members'],
      rows: v.series.map((p, i) => ({ label: labels[i]!, cells: [{ text: int(p.active_members), value: p.active_members }] })),
    },
    {
      id: 'chart-flow',
      kind: 'bar',
      title: 'New and churned members per interval',
      description: 'Bar chart of new and churned members in each interval.',
      columns: ['New members', 'Churned members'],
      rows: v.series.map((p, i) => ({
        label: labels[i]!,
        cells: [
          { text: int(p.new_members), value: p.new_members },
          { text: int(p.churned_members), value: p.churned_members },
        ],
      })),
    },
    {
      id: 'chart-revenue',
      kind: 'bar',
      title: 'Net revenue per interval',
      description: 'Bar chart of net revenue (gross less refunds and disputes) in each interval, one bar per currency.',
      columns: currencies.map((c) => `Net (${c})`),
      rows: v.series.map((p, i) => ({
        label: labels[i]!,
        cells: currencies.map((c) => {
          const line = netOf(p, c);
          return { text: line?.net ?? '0', value: Number(line?.net ?? 0) };
        }),
      })),
    },
  ];
  const t = v.totals;
  return {
    figures: [
      { label: 'MRR at the end', value: amounts(t.mrr) },
      { label: 'Active members at the end', value: int(t.active_members) },
      { label: 'New members', value: int(t.new_members) },
      { label: 'Churned members', value: int(t.churned_members) },
      { label: 'Churn rate', value: percent(t.churn_rate) },
      { label: 'Net revenue', value: t.revenue.length === 0 ? '0' : t.revenue.map((r) => `${r.net} ${r.currency}`).join(' · ') },
      { label: 'Failed payments', value: int(t.failed_payments) },
      { label: 'Refunds', value: t.revenue.length === 0 ? '0' : `${int(t.refunds_count)}: ${t.revenue.map((r) => `${r.refunds} ${r.currency}`).join(' · ')}` },
    ],
    tables,
    revenue: t.revenue,
    byPlan: t.revenue_by_plan.map((r) => ({ ...r, plan: r.plan_name ?? (r.plan_id ? 'a deleted plan' : 'no plan') })),
    mrrByPlan: t.mrr_by_plan.map((m) => ({ ...m, plan: m.plan_name ?? 'no plan' })),
  };
}
