import type { AccessState } from '../access/access.view.js';
import type { MembershipView } from '../memberships/membership.view.js';
import type { NotificationView } from '../users/notification.view.js';
import type { PaymentView } from '../payments/payment.view.js';
import type { UserView } from '../users/user.view.js';
import type { Platform, PlatformError } from '../targets/target.view.js';
import type { MemberFilter, MemberQuery, MemberStatus, PageCursor } from './member-query.js';

/**
 * The dashboard's read models of members (docs/dashboard-members.md): a row of the members table
 * and a member's page. The statements that fill them are src/store/dashboard-members.store.ts.
 */

/** One target's access of a member, as the table summarises it. */
export interface AccessSummary {
  targetName: string | null;
  platform: Platform;
  desired: 'granted' | 'revoked';
  state: AccessState;
}

export interface Unreachable {
  platform: Platform;
  /** `dm_closed`, `bot_blocked` or `no_conversation`. */
  reason: string;
}

/** A row of the members table: one membership (a member has at most one per project) and its user. */
export interface MemberRow {
  membershipId: string;
  userId: string;
  firstName: string | null;
  username: string | null;
  planId: string | null;
  planName: string | null;
  /** One status: banned, else expired, else in_grace, cancelling, trial or active (docs/dashboard-members.md). */
  status: MemberStatus;
  /** ISO 8601. */
  endDate: string;
  createdAt: string;
  subscriptionStatus: string | null;
  access: AccessSummary[];
  unreachable: Unreachable[];
}

/** A row as the statement reads it: the row and its page key (the sort column as text, and the tie-breaker). */
export interface KeyedRow {
  row: Omit<MemberRow, 'access' | 'unreachable'>;
  key: string;
  id: string;
}

export interface MemberTablePage {
  rows: MemberRow[];
  /** Matches counted up to COUNT_CAP + 1: `capped` when there are more. */
  total: number;
  capped: boolean;
  /** The cursors of the next and previous pages; null at either end. */
  next: string | null;
  previous: string | null;
}

/** The statements the members table reads with (src/store/dashboard-members.store.ts). */
export interface MemberTableStatements {
  /** Up to `limit` rows matching `filter` in `sort` order from `cursor` (a previous page's rows come back in table order). */
  page(projectId: string, query: Pick<MemberQuery, 'sort' | 'limit' | 'cursor'> & MemberFilter, now: Date): Promise<KeyedRow[]>;
  /** How many rows match, counting at most `cap`. */
  count(projectId: string, filter: MemberFilter, now: Date, cap: number): Promise<number>;
  /** The granted or pending access rows of these users, with their targets' names. */
  accessOf(projectId: string, userIds: readonly string[]): Promise<(AccessSummary & { userId: string })[]>;
  unreachableOf(projectId: string, userIds: readonly string[]): Promise<(Unreachable & { userId: string })[]>;
  /** The project's plans (deleted ones too: their members keep them), for the filter. */
  plans(projectId: string): Promise<PlanChoice[]>;
}

export interface PlanChoice {
  planId: string;
  name: string;
  deleted: boolean;
}

/** A member's access row on their page: the target and where its sync stands, with the last error. */
export interface MemberAccessRow {
  targetId: string;
  targetName: string | null;
  platform: Platform;
  kind: string;
  desired: 'granted' | 'revoked';
  state: AccessState;
  lastError: PlatformError | null;
  attempts: number;
  syncedAt: string | null;
}

export interface BanRecord {
  bannedAt: string;
  /** `dashboard:<user id>` or `dashboard:owner` for a ban made here, else the API key's id. */
  bannedBy: string | null;
  reason: string | null;
}

/** The statements of a member's page beyond what the API's services already read. */
export interface MemberPageStatements {
  accessRowsOf(projectId: string, userId: string): Promise<MemberAccessRow[]>;
  banOf(projectId: string, userId: string): Promise<BanRecord | null>;
  /** The member's table status at `now`; null without a membership. */
  statusOf(projectId: string, userId: string, now: Date): Promise<MemberStatus | null>;
}

/** A member's page (docs/dashboard-members.md, "A member's page"). */
export interface MemberPage {
  user: UserView;
  memberships: MembershipView[];
  /** The table's status of the membership (banned, in grace...). */
  status: MemberStatus | null;
  /** The membership's subscription renews and can be cancelled (the portal's rule). */
  canCancelRenewal: boolean;
  payments: { items: PaymentView[]; total: number };
  access: MemberAccessRow[];
  notifications: { items: NotificationView[]; total: number };
  ban: BanRecord | null;
  /** Telegram targets the member has not joined: where an invite can be handed over again. */
  invitable: { targetId: string; name: string }[];
}

export type { PageCursor };
