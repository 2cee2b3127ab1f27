import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { INTERVALS, type AnalyticsInterval } from '../../domain/analytics/period.js';
import { AppError } from '../../domain/errors.js';
import { dashboardPage, requirePermission, type DashboardDeps } from './context.js';
import { allowOwnScripts } from './csp.js';
import { moneyPageData } from './money-view.js';

/**
 * The money page (`/dashboard/{project_id}/money`, docs/analytics.md): a period picker (a GET
 * form), the period's figures, and four charts, each drawn by our script (assets/money.js, with
 * Chart.js's UMD build served from node_modules) from the table under it: without JavaScript the
 * tables are the page. Needs payments:read.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
const DAY = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A form's date (`YYYY-MM-DD`, UTC) as its midnight; null when it is not a real date. */
function dateOf(value: string): Date | null {
  if (!DATE.test(value)) return null;
  const d = new Date(`${value}T00:00:00.000Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value ? null : d;
}

const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);

type Query = { from?: string; to?: string; interval?: string };

/** The form's fields as the analytics service takes them: `to` is the last day shown, so the period ends the day after. */
function periodInput(query: Query): { from?: Date; to?: Date; interval?: AnalyticsInterval } {
  const from = first(query.from);
  const to = first(query.to);
  const interval = first(query.interval);
  const input: { from?: Date; to?: Date; interval?: AnalyticsInterval } = {};
  if (typeof from === 'string' && from !== '') {
    const d = dateOf(from);
    if (!d) throw new AppError('VALIDATION_ERROR', 'From must be a date (YYYY-MM-DD).');
    input.from = d;
  }
  if (typeof to === 'string' && to !== '') {
    const d = dateOf(to);
    if (!d) throw new AppError('VALIDATION_ERROR', 'To must be a date (YYYY-MM-DD).');
    input.to = new Date(d.getTime() + DAY);
  }
  if (typeof interval === 'string' && interval !== '') {
    if (!(INTERVALS as readonly string[]).includes(interval)) throw new AppError('VALIDATION_ERROR', `Interval must be one of: ${INTERVALS.join(', ')}.`);
    input.interval = interval as AnalyticsInterval;
  }
  return input;
}

/** The service's words for the API (`to must not be after…`) as the form's: the form's To is the last day, inclusive. */
const formWords = (message: string) =>
  message
    .replace(/^from must be before to$/, 'From must be on or before To.')
    .replace(/^to must not be after the end of today.*$/, 'To must not be after today (UTC).')
    .replace(/^the period holds more than (\d+) intervals of a (\w+).*$/, 'That is more than $1 intervals of a $2: choose a shorter period or a longer interval.');

export const moneyPages: FastifyPluginAsync<DashboardDeps> = async (app, { services }) => {
  app.get<{ Params: { project_id: string }; Querystring: Query }>('/dashboard/:project_id/money', hidden, async (request, reply) => {
    const actor = requirePermission(request, 'payments:read');
    let error: string | null = null;
    let view;
    try {
      view = await services.analytics.view(actor.projectId, periodInput(request.query));
    } catch (e) {
      if (!(e instanceof AppError) || e.code !== 'VALIDATION_ERROR') throw e;
      error = formWords(e.message);
      view = await services.analytics.view(actor.projectId, {});
    }
    allowOwnScripts(reply);
    const lastDay = new Date(Date.parse(view.to) - DAY).toISOString().slice(0, 10);
    return dashboardPage(reply, 'money', {
      title: 'Money and growth',
      section: 'money',
      httpStatus: error ? 422 : 200,
      error,
      form: {
        from: error ? (first(request.query.from) ?? '') : view.from.slice(0, 10),
        to: error ? (first(request.query.to) ?? '') : lastDay,
        interval: view.interval,
        intervals: INTERVALS,
      },
      period: `${view.from.slice(0, 10)} to ${lastDay} (UTC), by ${view.interval}`,
      ...moneyPageData(view),
    });
  });
};

const nodeRequire = createRequire(import.meta.url);
const CHART_JS = readFileSync(path.join(path.dirname(nodeRequire.resolve('chart.js')), 'chart.umd.js'), 'utf8');
const MONEY_JS = readFileSync(new URL('./assets/money.js', import.meta.url), 'utf8');

/** The money page's scripts, outside the signed-in scope (no session needed, nothing secret): Chart.js's UMD build from node_modules, and ours. */
export const moneyAssets: FastifyPluginAsync = async (app) => {
  const script = (body: string) => (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(body);
  app.get('/dashboard/assets/chart.umd.js', hidden, script(CHART_JS));
  app.get('/dashboard/assets/money.js', hidden, script(MONEY_JS));
};
