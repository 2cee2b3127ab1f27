import { AdminsService } from '../domain/admins/admins.service.js';
import { DashboardAudit } from '../domain/dashboard/audit.service.js';
import { DashboardOverview } from '../domain/dashboard/overview.service.js';
import { DashboardSessions } from '../domain/dashboard/sessions.service.js';
import { DashboardSignIn } from '../domain/dashboard/sign-in.service.js';
import { DashboardMemberActions } from '../domain/dashboard-members/member-actions.js';
import { DashboardMembersService } from '../domain/dashboard-members/members.service.js';
import { discordOAuth } from '../web/discord-oauth.js';
import { checkTelegramLogin } from '../web/telegram-login.js';
import type { AccessServices } from './access.js';
import type { FrontDeskServices } from './front-desk.js';
import { publicBase, type ServiceInputs } from './inputs.js';
import type { MemberServices } from './members.js';
import type { PaymentServices } from './payments.js';

/** The admins' dashboard (docs/dashboard.md, docs/dashboard-members.md). */
export interface DashboardServices {
  /** A project's admins and their permissions (docs/dashboard.md). */
  admins: AdminsService;
  /** The dashboard's sessions and one-time sign-in links (docs/dashboard.md). */
  dashboardSessions: DashboardSessions;
  /** An admin's sign-in to the dashboard with Discord or Telegram (docs/dashboard.md). */
  dashboardSignIn: DashboardSignIn;
  /** The dashboard's audit log of admin actions (docs/dashboard.md). */
  dashboardAudit: DashboardAudit;
  /** The dashboard overview's counts (docs/dashboard.md). */
  dashboardOverview: DashboardOverview;
  /** The dashboard's members table, its export and a member's page (docs/dashboard-members.md). */
  dashboardMembers: DashboardMembersService;
  /** A member's actions in the dashboard, through the API's own services (docs/dashboard-members.md). */
  dashboardMemberActions: DashboardMemberActions;
}

export function dashboardServices(
  { stores, config, clock, secretBox }: ServiceInputs,
  {
    users,
    memberships,
    memberNotifications,
    payments,
    access,
    portal,
    portalActions,
  }: Pick<MemberServices, 'users' | 'memberships' | 'memberNotifications'> & Pick<PaymentServices, 'payments'> & Pick<AccessServices, 'access'> & Pick<FrontDeskServices, 'portal' | 'portalActions'>,
): DashboardServices {
  const dashboardAudit = new DashboardAudit(stores.dashboardAudit, clock);
  const dashboardSessions = new DashboardSessions(stores.dashboardSessions, clock, { publicUrl: config.frontDesk.publicUrl });
  return {
    admins: new AdminsService(stores.admins),
    dashboardSessions,
    dashboardSignIn: new DashboardSignIn(stores.dashboardSessions, stores.web, dashboardSessions, discordOAuth(config.access.discordApiUrl), checkTelegramLogin, secretBox, clock, {
      publicUrl: publicBase(config),
    }),
    dashboardAudit,
    dashboardOverview: new DashboardOverview(stores.dashboardOverview, clock),
    dashboardMembers: new DashboardMembersService({
      table: stores.dashboardMembers,
      page: stores.dashboardMembers,
      users,
      memberships,
      payments,
      notifications: memberNotifications,
      portalActions,
      clock,
    }),
    // Each action through the API's (or the portal's) own service, recorded in the audit log.
    dashboardMemberActions: new DashboardMemberActions({
      users,
      memberships,
      extendStatement: stores.memberships,
      access,
      portal,
      portalActions,
      audit: dashboardAudit,
      clock,
    }),
  };
}
