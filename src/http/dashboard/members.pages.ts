import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { fieldsOf, parseMemberQuery } from '../../domain/dashboard-members/member-query.js';
import type { MemberRow } from '../../domain/dashboard-members/member-views.js';
import { csvField } from '../routes/exports/export-stream.js';
import { dashboardPage, requirePermission, type DashboardDeps } from './context.js';
import { accessText, rowView, SORT_CHOICES, STATUS_CHOICES, unreachableText, VIEW_CHOICES } from './members-view.js';

/**
 * The members table (`/dashboard/{project_id}/members`, docs/dashboard-members.md): a GET form for
 * status, plan, search and sort, the saved views as links, a page of rows read by key, the links
 * to the pages either side, and the CSV export of the current view. The server filters, sorts and
 * pages the whole project; the page is plain HTML and works without JavaScript.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { project_id: string };

const query = (fields: Record<string, string>) => {
  const q = new URLSearchParams(fields).toString();
  return q === '' ? '' : `?${q}`;
};

/** The CSV's columns: the table's, the member's name in its two parts, the access and flags as text. */
const CSV_NAMES = ['user_id', 'first_name', 'username', 'plan_name', 'status', 'end_date', 'created_at', 'subscription_status', 'access', 'unreachable', 'membership_id'];
const csvCells = (r: MemberRow) => [r.userId, r.firstName, r.username, r.planName, r.status, r.endDate, r.createdAt, r.subscriptionStatus, accessText(r.access).text, unreachableText(r.unreachable), r.membershipId];
const csvLine = (cells: readonly (string | null)[]) => `${cells.map(csvField).join(',')}\r\n`;

/** The export's lines, a batch at a time, read only as the client takes them (a byte-counted buffer). */
async function* csvOf(first: IteratorResult<MemberRow[]>, rest: AsyncGenerator<MemberRow[]>): AsyncGenerator<string> {
  try {
    let text = csvLine(CSV_NAMES);
    for (let batch = first; !batch.done; batch = await rest.next()) {
      for (const row of batch.value) text += csvLine(csvCells(row));
      yield text;
      text = '';
    }
    if (text !== '') yield text;
  } finally {
    await rest.return(undefined);
  }
}

export const membersPages: FastifyPluginAsync<DashboardDeps> = async (app, { services }) => {
  app.get<{ Params: Params; Querystring: Record<string, unknown> }>('/dashboard/:project_id/members', hidden, async (request, reply) => {
    const actor = requirePermission(request, 'memberships:read');
    const plans = await services.dashboardMembers.plans(actor);
    const raw = Object.fromEntries(Object.entries(request.query).map(([k, v]) => [k, typeof v === 'string' ? v : '']));
    const parsed = parseMemberQuery(request.query);
    const base = { title: 'Members', section: 'members' as const, plans, statuses: STATUS_CHOICES, sorts: SORT_CHOICES };
    if (!parsed.ok) {
      return dashboardPage(reply, 'members', { ...base, httpStatus: 422, error: parsed.error.message, form: { ...raw, q: raw.q ?? '' }, views: viewLinks(raw.view), table: null });
    }
    const q = parsed.value;
    const page = await services.dashboardMembers.table(actor, q);
    if (!page.ok) throw page.error;
    const path = (suffix: string) => `${request.url.split('?')[0]}${suffix}`;
    const fields = fieldsOf(q);
    const rows = page.value.rows.map((r) => rowView(r, path(`/${r.userId}`)));
    const sortLink = (key: 'end_date' | 'created' | 'name') => {
      const next = q.sort === key ? `-${key}` : q.sort === `-${key}` ? key : key === 'created' ? '-created' : key;
      const arrow = q.sort === key ? 'ascending' : q.sort === `-${key}` ? 'descending' : 'none';
      return { href: path(query({ ...fields, sort: next })), sorted: arrow };
    };
    return dashboardPage(reply, 'members', {
      ...base,
      error: null,
      form: { status: q.status ?? '', plan: q.planId ?? '', q: q.search ?? raw.q ?? '', sort: q.sort, limit: String(q.limit), view: q.view ?? '' },
      views: viewLinks(q.view),
      table: {
        rows,
        total: page.value.capped ? `More than ${page.value.total.toLocaleString('en-US')} members match` : `${page.value.total.toLocaleString('en-US')} ${page.value.total === 1 ? 'member matches' : 'members match'}`,
        next: page.value.next ? path(query({ ...fields, after: page.value.next })) : null,
        previous: page.value.previous ? path(query({ ...fields, before: page.value.previous })) : null,
        first: q.cursor ? path(query(fields)) : null,
        exportHref: path(`/export${query({ ...fieldsOf({ ...q, limit: undefined }) })}`),
        sort: { end_date: sortLink('end_date'), created: sortLink('created'), name: sortLink('name') },
      },
    });

    function viewLinks(current: string | undefined) {
      const listPath = request.url.split('?')[0]!;
      return VIEW_CHOICES.map((v) => ({ ...v, href: `${listPath}?view=${v.key}`, current: v.key === current }));
    }
  });

  // The current view (filters and sort, not the page) as one CSV file.
  app.get<{ Params: Params; Querystring: Record<string, unknown> }>('/dashboard/:project_id/members/export', hidden, async (request, reply) => {
    const actor = requirePermission(request, 'memberships:read');
    const parsed = parseMemberQuery(request.query);
    if (!parsed.ok) throw parsed.error;
    // The whole view: its filters and sort, whatever page the link was on.
    const { cursor: _c, limit: _l, ...filter } = parsed.value;
    const batches = services.dashboardMembers.exportRows(actor, filter);
    const first = await batches.next();
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8; header=present')
      .header('content-disposition', `attachment; filename="members-${day}.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(csvOf(first, batches), { objectMode: false, highWaterMark: 64 * 1024 }));
  });
};
