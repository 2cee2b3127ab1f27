import Type from 'typebox';
import { INTERVALS } from '../../../domain/analytics/period.js';
import { Envelope, errorResponses, InstantString, ProjectParams, QueryInstant } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const Money = {
  currency: Type.String({ examples: ['USD'] }),
  amount: Type.String({ description: "Decimal string in the currency's unit", examples: ['1249.50'] }),
  amount_minor: Type.Integer({ description: "In the currency's smallest unit", examples: [124950] }),
};

const amount = (what: string) => ({
  [what]: Type.String({ description: `${what}: decimal string in the currency's unit` }),
  [`${what}_minor`]: Type.Integer({ description: `${what} in the currency's smallest unit` }),
});

const RevenueLine = {
  currency: Type.String({ examples: ['USD'] }),
  payments_count: Type.Integer({ description: 'Payments that succeeded in the period' }),
  ...amount('gross'),
  refunds_count: Type.Integer(),
  ...amount('refunds'),
  disputes_count: Type.Integer(),
  ...amount('disputes'),
  ...amount('net'),
};

const PlanRef = { plan_id: Nullable(Type.String({ format: 'uuid' })), plan_name: Nullable(Type.String()) };

const Figures = {
  active_members_at_start: Type.Integer({ description: 'Members active at the start' }),
  active_members: Type.Integer({ description: 'Members active at the end' }),
  new_members: Type.Integer(),
  churned_members: Type.Integer(),
  churn_rate: Nullable(Type.Number({ description: 'churned_members / (active_members_at_start + new_members), as Stripe counts subscriber churn; null when both are 0' })),
  mrr: Type.Array(Type.Object(Money), { description: 'MRR at the end, one entry per currency' }),
  revenue: Type.Array(Type.Object(RevenueLine), { description: 'One line per currency' }),
  failed_payments: Type.Integer(),
  refunds_count: Type.Integer(),
  disputes_count: Type.Integer(),
};

const Analytics = Type.Object({
  from: InstantString,
  to: InstantString,
  interval: Type.Enum([...INTERVALS]),
  totals: Type.Object({
    ...Figures,
    mrr_by_plan: Type.Array(Type.Object({ ...PlanRef, ...Money })),
    revenue_by_plan: Type.Array(Type.Object({ ...PlanRef, ...RevenueLine })),
  }),
  series: Type.Array(Type.Object({ start: InstantString, end: InstantString, ...Figures }), { description: 'One point per interval, oldest first' }),
});

export const analyticsSchema = {
  summary: "The project's money and growth over a period: MRR, members, churn, revenue, failed payments, refunds",
  description:
    'docs/analytics.md. from and to are UTC midnights (the period is [from, to), by default the 30 days ending with today); ' +
    'interval day (default), week (ISO, from Monday) or month; at most 731 intervals. Any key of the project. An unknown parameter is a 422.',
  params: ProjectParams,
  querystring: Type.Object({
    from: Type.Optional(QueryInstant('from')),
    to: Type.Optional(QueryInstant('to')),
    interval: Type.Optional(Type.Enum([...INTERVALS], { 'x-message': `interval must be one of: ${INTERVALS.join(', ')}` })),
  }),
  response: { 200: Envelope(Analytics), ...errorResponses(422) },
};
