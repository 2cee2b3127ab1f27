import { AnalyticsService } from '../domain/analytics/analytics.service.js';
import { ExportsService } from '../domain/exports/exports.service.js';
import { MembershipsService } from '../domain/memberships/memberships.service.js';
import { MemberNotificationsService } from '../domain/users/member-notifications.service.js';
import { UsersService } from '../domain/users/users.service.js';
import type { ServiceInputs } from './inputs.js';

/** Members, their memberships and what is read across them (docs/memberships.md). */
export interface MemberServices {
  users: UsersService;
  /** What each member was sent (docs/lifecycle.md). */
  memberNotifications: MemberNotificationsService;
  memberships: MembershipsService;
  /** Memberships and payments as one streamed file (docs/memberships.md, "Export"). */
  exports: ExportsService;
  /** Money and growth: MRR, members, churn, revenue over a period (docs/analytics.md). */
  analytics: AnalyticsService;
}

export function memberServices({ stores, clock, transactor }: ServiceInputs): MemberServices {
  return {
    users: new UsersService(stores.users),
    memberNotifications: new MemberNotificationsService(stores.memberNotifications),
    memberships: new MembershipsService(stores.memberships, clock, transactor, stores.bulkExtend),
    exports: new ExportsService(stores.exports, clock),
    analytics: new AnalyticsService(stores.analytics, clock),
  };
}
