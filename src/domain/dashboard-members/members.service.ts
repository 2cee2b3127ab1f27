import type { Clock } from '../clock.js';
import { EXPORT_BATCH } from '../exports/exports.service.js';
import { ok, type Result } from '../errors.js';
import type { PortalActions } from '../front-desk/portal-actions.js';
import type { MembershipsService } from '../memberships/memberships.service.js';
import type { PaymentsService } from '../payments/payments.service.js';
import type { MemberNotificationsService } from '../users/member-notifications.service.js';
import type { UsersService } from '../users/users.service.js';
import { refuseUnless, type ActingAdmin } from './acting-admin.js';
import { encodeCursor, type MemberFilter, type MemberQuery } from './member-query.js';
import type { KeyedRow, MemberPage, MemberPageStatements, MemberRow, MemberTablePage, MemberTableStatements, PlanChoice } from './member-views.js';

/**
 * What the dashboard's members pages read (docs/dashboard-members.md): the table over the whole
 * project, its export, and a member's page. Each needs `memberships:read`; the member's page is
 * put together from the API's own services (the same membership, payment, notification objects)
 * and two statements of its own (the access rows with their targets' names, the ban).
 */

/** Matches counted at most: the table says "1,000+" past it (a count costs a scan of every match). */
export const COUNT_CAP = 1_000;
/** The export's first batch: what the browser waits for before its download begins. */
export const FIRST_EXPORT_BATCH = 100;
/** The latest payments and messages a member's page lists. */
const RECENT = 20;

export interface MembersDeps {
  table: MemberTableStatements;
  page: MemberPageStatements;
  users: Pick<UsersService, 'get'>;
  memberships: Pick<MembershipsService, 'list'>;
  payments: Pick<PaymentsService, 'list'>;
  notifications: Pick<MemberNotificationsService, 'list'>;
  portalActions: Pick<PortalActions, 'renewalTarget'>;
  clock: Clock;
}

export class DashboardMembersService {
  constructor(private readonly deps: MembersDeps) {}

  /** A page of the table: rows in the query's order from its cursor, the capped count, the cursors either side. */
  async table(actor: ActingAdmin, query: MemberQuery): Promise<Result<MemberTablePage>> {
    const refused = refuseUnless(actor, 'memberships:read');
    if (refused) return refused;
    const now = this.deps.clock.now();
    // One row more than the page says whether a page follows in the direction read.
    const [keyed, counted] = await Promise.all([
      this.deps.table.page(actor.projectId, { ...query, limit: query.limit + 1 }, now),
      this.deps.table.count(actor.projectId, query, now, COUNT_CAP + 1),
    ]);
    const backwards = query.cursor?.direction === 'before';
    const more = keyed.length > query.limit;
    const shown = more ? (backwards ? keyed.slice(1) : keyed.slice(0, query.limit)) : keyed;
    const first = shown[0];
    const last = shown.at(-1);
    const cursor = (r: KeyedRow | undefined) => (r ? encodeCursor(query.sort, r.key, r.id) : null);
    return ok({
      rows: await this.withAccess(actor.projectId, shown),
      total: Math.min(counted, COUNT_CAP),
      capped: counted > COUNT_CAP,
      // Forwards: a next page when one more row came back; a previous one whenever this is not the first.
      next: backwards || more ? cursor(last) : null,
      previous: query.cursor !== null && (!backwards || more) ? cursor(first) : null,
    });
  }

  /** The project's plans, for the table's filter. */
  plans(actor: ActingAdmin): Promise<PlanChoice[]> {
    return this.deps.table.plans(actor.projectId);
  }

  /**
   * Every row of the table's current view, in its order, in batches read one after another by key
   * (as the API's export reads): the memory held is one batch, whatever the project's size. The
   * first batch is small, so the download starts at once (the route waits for it before
   * answering); each next one is four times larger, up to EXPORT_BATCH.
   */
  async *exportRows(actor: ActingAdmin, filter: MemberFilter & Pick<MemberQuery, 'sort'>): AsyncGenerator<MemberRow[]> {
    if (refuseUnless(actor, 'memberships:read')) return;
    const now = this.deps.clock.now();
    let cursor: MemberQuery['cursor'] = null;
    for (let size = FIRST_EXPORT_BATCH; ; size = Math.min(size * 4, EXPORT_BATCH)) {
      const batch = await this.deps.table.page(actor.projectId, { ...filter, limit: size, cursor }, now);
      if (batch.length > 0) yield await this.withAccess(actor.projectId, batch);
      const last = batch.at(-1);
      if (batch.length < size || !last) return;
      cursor = { direction: 'after', key: last.key, id: last.id };
    }
  }

  /** A member's page; NOT_FOUND for a user the project has not seen. */
  async member(actor: ActingAdmin, userId: string): Promise<Result<MemberPage>> {
    const refused = refuseUnless(actor, 'memberships:read');
    if (refused) return refused;
    const { projectId } = actor;
    const user = await this.deps.users.get(projectId, userId);
    if (!user.ok) return user;
    const page = { limit: RECENT, offset: 0 };
    const [memberships, payments, notifications, access, ban, status] = await Promise.all([
      this.deps.memberships.list(projectId, { userId, limit: 10, offset: 0 }),
      this.deps.payments.list(projectId, { userId, ...page }),
      this.deps.notifications.list(projectId, userId, page),
      this.deps.page.accessRowsOf(projectId, userId),
      this.deps.page.banOf(projectId, userId),
      this.deps.page.statusOf(projectId, userId, this.deps.clock.now()),
    ]);
    const membership = memberships.items[0];
    const cancellable = membership ? await this.deps.portalActions.renewalTarget({ projectId, userId }, membership.membership_id, 'cancel') : null;
    return ok({
      user: user.value,
      memberships: memberships.items,
      status,
      canCancelRenewal: cancellable !== null,
      payments,
      access,
      notifications: notifications.ok ? notifications.value : { items: [], total: 0 },
      ban,
      invitable: access
        .filter((a) => a.platform === 'telegram' && a.desired === 'granted' && a.state === 'waiting_for_member')
        .map((a) => ({ targetId: a.targetId, name: a.targetName ?? 'a Telegram chat' })),
    });
  }

  /** The rows with their access and unreachable flags: two statements for the whole page. */
  private async withAccess(projectId: string, keyed: readonly KeyedRow[]): Promise<MemberRow[]> {
    const ids = keyed.map((k) => k.row.userId);
    const [access, unreachable] = await Promise.all([this.deps.table.accessOf(projectId, ids), this.deps.table.unreachableOf(projectId, ids)]);
    const accessBy = groupBy(access);
    const unreachableBy = groupBy(unreachable);
    return keyed.map(({ row }) => ({ ...row, access: accessBy.get(row.userId) ?? [], unreachable: unreachableBy.get(row.userId) ?? [] }));
  }
}

/** Rows by their user, each without the user id. */
function groupBy<T extends { userId: string }>(rows: readonly T[]): Map<string, Omit<T, 'userId'>[]> {
  const by = new Map<string, Omit<T, 'userId'>[]>();
  for (const { userId, ...rest } of rows) {
    const list = by.get(userId) ?? [];
    list.push(rest);
    by.set(userId, list);
  }
  return by;
}
