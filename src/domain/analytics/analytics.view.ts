import { fractionDigits } from '../payments/checkout-rules.js';
import type { FactSums } from '../../store/analytics.store.js';
import { dayOf, type Period } from './period.js';

/** Money and growth as the API shows it (docs/analytics.md, "The answer"): built from the stored sums, pure. */

/** The plan key of facts without a plan (the zero uuid: a unique key needs a value). */
export const NO_PLAN = '00000000-0000-0000-0000-000000000000';

export interface Money {
  currency: string;
  /** Decimal string in the currency's unit ("29.99"). */
  amount: string;
  /** In the currency's smallest unit (2999). */
  amount_minor: number;
}

export interface RevenueLine {
  currency: string;
  payments_count: number;
  gross: string;
  gross_minor: number;
  refunds_count: number;
  refunds: string;
  refunds_minor: number;
  disputes_count: number;
  disputes: string;
  disputes_minor: number;
  /** gross - refunds - disputes. */
  net: string;
  net_minor: number;
}

export interface PlanRef {
  plan_id: string | null;
  plan_name: string | null;
}

export interface Figures {
  active_members: number;
  new_members: number;
  churned_members: number;
  /** churned_members / (active_members_at_start + new_members), Stripe's subscriber churn rate; null when both are 0. */
  churn_rate: number | null;
  mrr: Money[];
  revenue: RevenueLine[];
  failed_payments: number;
  refunds_count: number;
  disputes_count: number;
}

export interface SeriesPoint extends Figures {
  start: string;
  end: string;
  active_members_at_start: number;
}

export interface AnalyticsView {
  from: string;
  to: string;
  interval: Period['interval'];
  totals: Figures & { active_members_at_start: number; mrr_by_plan: (PlanRef & Money)[]; revenue_by_plan: (PlanRef & RevenueLine)[] };
  series: SeriesPoint[];
}

export function decimal(minor: number, currency: string): string {
  const digits = fractionDigits(currency);
  if (digits === 0) return String(minor);
  const sign = minor < 0 ? '-' : '';
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

const money = (currency: string, minor: number): Money => ({ currency, amount: decimal(minor, currency), amount_minor: minor });

interface Revenue {
  payments: number;
  gross: number;
  refunds: number;
  refunded: number;
  disputes: number;
  disputed: number;
  failed: number;
}

const emptyRevenue = (): Revenue => ({ payments: 0, gross: 0, refunds: 0, refunded: 0, disputes: 0, disputed: 0, failed: 0 });

function addRevenue(into: Revenue, s: FactSums): void {
  into.payments += s.grossCount;
  into.gross += s.grossMinor;
  into.refunds += s.refundedCount;
  into.refunded += s.refundedMinor;
  into.disputes += s.disputedCount;
  into.disputed += s.disputedMinor;
  into.failed += s.failedCount;
}

function revenueLine(currency: string, r: Revenue): RevenueLine {
  const net = r.gross - r.refunded - r.disputed;
  return {
    currency,
    payments_count: r.payments,
    gross: decimal(r.gross, currency),
    gross_minor: r.gross,
    refunds_count: r.refunds,
    refunds: decimal(r.refunded, currency),
    refunds_minor: r.refunded,
    disputes_count: r.disputes,
    disputes: decimal(r.disputed, currency),
    disputes_minor: r.disputed,
    net: decimal(net, currency),
    net_minor: net,
  };
}

/** Sums into a map by key, created empty on first use. */
function bump<T>(map: Map<string, T>, key: string, empty: () => T): T {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = empty()));
  return v;
}

const byCurrency = <T>(map: Map<string, T>) => [...map.entries()].filter(([c]) => c !== '').sort(([a], [b]) => a.localeCompare(b));
const rounded = (x: number) => Math.round(x);
/** Stripe's subscriber churn rate: churned / (active at the start + new in the period); null when both are 0. */
const rate = (churned: number, atStart: number, added: number) => (atStart + added > 0 ? Math.round((churned / (atStart + added)) * 1e6) / 1e6 : null);

export function buildView(period: Period, sums: readonly FactSums[], planNames: ReadonlyMap<string, string>): AnalyticsView {
  // Running state: members and MRR booked up to the current point.
  let active = 0;
  const mrr = new Map<string, number>();
  const mrrByPlan = new Map<string, number>(); // planKey|currency
  const points = new Map<string, FactSums[]>();
  const planRevenue = new Map<string, Revenue>(); // planKey|currency
  for (const s of sums) {
    const key = `${s.planKey}|${s.currency}`;
    if (s.pre) {
      active += s.started - s.ended;
      mrr.set(s.currency, (mrr.get(s.currency) ?? 0) + Number(s.mrrMinor));
      mrrByPlan.set(key, (mrrByPlan.get(key) ?? 0) + Number(s.mrrMinor));
    } else if (s.planKey !== null) {
      mrrByPlan.set(key, (mrrByPlan.get(key) ?? 0) + Number(s.mrrMinor));
      if (s.currency !== '') addRevenue(bump(planRevenue, key, emptyRevenue), s);
    } else if (s.bucket !== null) bump(points, s.bucket, () => []).push(s);
  }
  const activeAtStart = active;
  const totalRevenue = new Map<string, Revenue>();
  let newMembers = 0;
  let churned = 0;
  const series: SeriesPoint[] = period.buckets.map(({ start, end }) => {
    const before = active;
    const revenue = new Map<string, Revenue>();
    let started = 0;
    let ended = 0;
    for (const s of points.get(dayOf(start)) ?? []) {
      started += s.started;
      ended += s.ended;
      mrr.set(s.currency, (mrr.get(s.currency) ?? 0) + Number(s.mrrMinor));
      if (s.currency === '') continue;
      addRevenue(bump(revenue, s.currency, emptyRevenue), s);
      addRevenue(bump(totalRevenue, s.currency, emptyRevenue), s);
    }
    active += started - ended;
    newMembers += started;
    churned += ended;
    const lines = byCurrency(revenue);
    return {
      start: start.toISOString(),
      end: end.toISOString(),
      active_members_at_start: before,
      active_members: active,
      new_members: started,
      churned_members: ended,
      churn_rate: rate(ended, before, started),
      mrr: byCurrency(mrr).map(([c, v]) => money(c, rounded(v))).filter((m) => m.amount_minor !== 0),
      revenue: lines.map(([c, r]) => revenueLine(c, r)),
      failed_payments: lines.reduce((n, [, r]) => n + r.failed, 0),
      refunds_count: lines.reduce((n, [, r]) => n + r.refunds, 0),
      disputes_count: lines.reduce((n, [, r]) => n + r.disputes, 0),
    };
  });
  const plan = (key: string): PlanRef => (key === NO_PLAN ? { plan_id: null, plan_name: null } : { plan_id: key, plan_name: planNames.get(key) ?? null });
  const split = (key: string) => key.split('|') as [string, string];
  const totals = byCurrency(totalRevenue);
  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    interval: period.interval,
    totals: {
      active_members_at_start: activeAtStart,
      active_members: active,
      new_members: newMembers,
      churned_members: churned,
      churn_rate: rate(churned, activeAtStart, newMembers),
      mrr: byCurrency(mrr).map(([c, v]) => money(c, rounded(v))).filter((m) => m.amount_minor !== 0),
      mrr_by_plan: [...mrrByPlan.entries()]
        .map(([key, v]) => ({ key: split(key), v: rounded(v) }))
        .filter(({ key, v }) => key[1] !== '' && v !== 0)
        .sort((a, b) => a.key[1].localeCompare(b.key[1]) || b.v - a.v)
        .map(({ key, v }) => ({ ...plan(key[0]), ...money(key[1], v) })),
      revenue: totals.map(([c, r]) => revenueLine(c, r)),
      revenue_by_plan: [...planRevenue.entries()]
        .map(([key, r]) => ({ key: split(key), r }))
        .sort((a, b) => a.key[1].localeCompare(b.key[1]) || b.r.gross - a.r.gross)
        .map(({ key, r }) => ({ ...plan(key[0]), ...revenueLine(key[1], r) })),
      failed_payments: totals.reduce((n, [, r]) => n + r.failed, 0),
      refunds_count: totals.reduce((n, [, r]) => n + r.refunds, 0),
      disputes_count: totals.reduce((n, [, r]) => n + r.disputes, 0),
    },
    series,
  };
}
