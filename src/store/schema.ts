/**
 * The tables, one import point for the code (`import * as schema from './schema.js'` in db.ts, named
 * imports in the stores). They are defined by group in `schema/`; drizzle-kit generates the SQL
 * migrations in `drizzle/` from those files (`npm run db:generate`); migrations are forward-only.
 */

export { apiKeys, idempotencyKeys, instanceSecrets, projects, settings } from './schema/projects.js';
export { plans, planTargets, targets } from './schema/catalogue.js';
export { bans, memberships, users } from './schema/members.js';
export { events, webhookDeliveries, webhookDeliveryAttempts, webhooks } from './schema/events.js';
export { bulkExtendJobs } from './schema/bulk-extend.js';
export { access, accessPlanJobs, discordInteractions, integrations } from './schema/access.js';
export { telegramInvites, telegramUpdates } from './schema/telegram.js';
export { heldReversals, merchantAccounts, paymentEvents, payments } from './schema/payments.js';
export { couponRedemptions, coupons, couponStripeCoupons } from './schema/coupons.js';
export { payLinks, portalLinks } from './schema/front-desk.js';
export { memberInvoicing, memberStripeCustomers } from './schema/invoicing.js';
export { notifications, reminderCursors, reminders, unreachableMembers } from './schema/notifications.js';
export { discordMemberTokens, guildJoins, telegramLogins, webLogins } from './schema/web.js';
export { admins } from './schema/admins.js';
export { analyticsDays } from './schema/analytics.js';
export { dashboardAudit, dashboardLinks, dashboardLogins, dashboardSessions } from './schema/dashboard.js';
