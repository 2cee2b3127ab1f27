import { NotificationsStore } from './notifications.store.js';
import { RemindersStore } from './reminders.store.js';
import { GuildJoinsStore } from './guild-joins.store.js';
import { WebStore } from './web.store.js';
import type { Clock } from '../domain/clock.js';
import { AccessPlanStore, EMBEDDED_PROJECT_BATCH, PROJECT_BATCH } from './access-plan.store.js';
import { AccessReconcileStore } from './access-reconcile.store.js';
import { AccessWorkerStore } from './access-worker.store.js';
import { BotLeasesStore } from './bot-leases.store.js';
import { AccessStore } from './access.store.js';
import { AdminsStore } from './admins.store.js';
import { DashboardAuditStore } from './dashboard-audit.store.js';
import { DashboardOverviewStore } from './dashboard-overview.store.js';
import { DashboardSessionsStore } from './dashboard-sessions.store.js';
import { DashboardMembersStore } from './dashboard-members.store.js';
import { ApiKeysStore } from './api-keys.store.js';
import { BulkExtendStore } from './bulk-extend.store.js';
import { CouponsStore } from './coupons.store.js';
import type { Database, Db } from '../database/db.js';
import { DeliveriesStore } from './deliveries.store.js';
import { DeliveryLogStore } from './delivery-log.store.js';
import { DiscordFrontDeskStore } from './discord-front-desk.store.js';
import { ExpiryStore } from './expiry.store.js';
import { RetentionStore } from './retention.store.js';
import { IdempotencyStore } from './idempotency.store.js';
import { InvoicingStore } from './invoicing.store.js';
import { InstanceSecretsStore } from './instance-secrets.store.js';
import { IntegrationsStore } from './integrations.store.js';
import { LiveEventsStore } from './live-events.store.js';
import { MaintenanceStore } from './maintenance.store.js';
import { MembershipImportStore } from './membership-import.store.js';
import { EXTEND_IN_FLIGHT, MembershipsStore } from './memberships.store.js';
import { MerchantAccountsStore } from './merchant-accounts.store.js';
import { PaidMembershipsStore } from './paid-memberships.store.js';
import { PaymentReversalsStore } from './payment-reversals.store.js';
import { PaymentsStore } from './payments.store.js';
import { ExportsStore } from './exports.store.js';
import { AnalyticsStore } from './analytics.store.js';
import { PayLinksStore } from './pay-links.store.js';
import { PortalLinksStore } from './portal-links.store.js';
import { StripeEventsStore } from './stripe-events.store.js';
import { PlansStore } from './plans.store.js';
import { ProjectsStore } from './projects.store.js';
import { SettingsStore } from './settings.store.js';
import { TargetsStore } from './targets.store.js';
import { TelegramInvitesStore } from './telegram-invites.store.js';
import { TelegramReconcileStore } from './telegram-reconcile.store.js';
import { TelegramUpdatesStore } from './telegram-updates.store.js';
import { UsersStore } from './users.store.js';
import { MemberNotificationsStore } from './member-notifications.store.js';
import { WebhooksStore } from './webhooks.store.js';

/**
 * Every store, one per table group, built on one database: the container's `stores`. The composition
 * root (src/container.ts) builds them once per process; nothing else constructs a store.
 */

export interface Stores {
  projects: ProjectsStore;
  apiKeys: ApiKeysStore;
  settings: SettingsStore;
  users: UsersStore;
  memberships: MembershipsStore;
  membershipImport: MembershipImportStore;
  bulkExtend: BulkExtendStore;
  expiry: ExpiryStore;
  retention: RetentionStore;
  /** The counts and VACUUM statements of embedded storage's maintenance (src/domain/retention/embedded.vacuumer.ts). */
  maintenance: MaintenanceStore;
  plans: PlansStore;
  targets: TargetsStore;
  webhooks: WebhooksStore;
  deliveries: DeliveriesStore;
  deliveryLog: DeliveryLogStore;
  liveEvents: LiveEventsStore;
  idempotency: IdempotencyStore;
  instanceSecrets: InstanceSecretsStore;
  /** The projects' bot connections. */
  integrations: IntegrationsStore;
  /** The access planner's SQL: desired access from the memberships (docs/access-planning.md). */
  accessPlan: AccessPlanStore;
  /** The access rows as the API shows them. */
  access: AccessStore;
  /** Drift repair's SQL: comparing access rows with a guild's member list (src/access/reconciler.ts). */
  accessReconcile: AccessReconcileStore;
  /** The access worker's SQL: bot leases, claims of pending rows, call outcomes (src/access/access.worker.ts). */
  accessWorker: AccessWorkerStore;
  botLeases: BotLeasesStore;
  /** The invite links the Telegram connector made, one member each (src/access/telegram/). */
  telegramInvites: TelegramInvitesStore;
  /** A Telegram bot's updates as received, handled once each (src/access/telegram/updates.ts). */
  telegramUpdates: TelegramUpdatesStore;
  /** Telegram drift repair's SQL: the managed members asked about, page by page, and the repairs (src/access/telegram/telegram.reconciler.ts). */
  telegramReconcile: TelegramReconcileStore;
  /** The projects' merchant accounts, their secrets sealed (docs/payments.md). */
  merchantAccounts: MerchantAccountsStore;
  payments: PaymentsStore;
  /** The exports' keyset batches of memberships and payments (docs/memberships.md, "Export"). */
  exports: ExportsStore;
  /** Money and growth: the per-day facts the triggers book, folded and summed (docs/analytics.md). */
  analytics: AnalyticsStore;
  /** Refunds and disputes: payments marked, reversals held for payments not recorded yet (docs/payments.md, "Out of order"). */
  paymentReversals: PaymentReversalsStore;
  /** The membership statements of payments: grants by a plan, subscription statuses (docs/payments.md). */
  paidMemberships: PaidMembershipsStore;
  /** Stripe's events, each recorded once (docs/payments.md). */
  stripeEvents: StripeEventsStore;
  /** Coupons, their Stripe coupons and the uses checkouts reserve (docs/coupons.md). */
  coupons: CouponsStore;
  /** A project's admins and their permissions (docs/dashboard.md). */
  admins: AdminsStore;
  /** The dashboard's sessions, one-time sign-in links and Discord sign-ins under way (docs/dashboard.md). */
  dashboardSessions: DashboardSessionsStore;
  /** The dashboard's audit log of admin actions (docs/dashboard.md). */
  dashboardAudit: DashboardAuditStore;
  /** The dashboard overview's capped counts (docs/dashboard.md). */
  dashboardOverview: DashboardOverviewStore;
  /** The dashboard's members table and member page (docs/dashboard-members.md). */
  dashboardMembers: DashboardMembersStore;
  /** Pay links: a plan bound to one member, the Checkout Session it made, its use (docs/front-desk.md). */
  payLinks: PayLinksStore;
  /** The members' single-use portal links and the browser sessions they start (docs/front-desk.md). */
  portalLinks: PortalLinksStore;
  /** The members' invoicing details (docs/portal.md). */
  invoicing: InvoicingStore;
  /** Discord's commands for members: the application, interaction ids, plans per guild, the commands' guilds (docs/front-desk.md). */
  discordFrontDesk: DiscordFrontDeskStore;
  /** The confirmations the bot sends members after a payment, and the members it cannot reach (docs/front-desk.md, "Confirmations"). */
  notifications: NotificationsStore;
  /** The reminders' scan before memberships end (docs/lifecycle.md). */
  reminders: RemindersStore;
  /** A member's messages and what became of each, as the API lists them (docs/lifecycle.md). */
  memberNotifications: MemberNotificationsStore;
  /** The public plan page and the logins with Discord under way (docs/web.md). */
  web: WebStore;
  /** The guild joins after a payment of a member who logged in with Discord (docs/web.md). */
  guildJoins: GuildJoinsStore;
}

/** How each store is built on a database handle: the process's own, or a transaction's. */
function storeFactories(database: Database, clock: Clock): { [K in keyof Stores]: (db: Db) => Stores[K] } {
  return {
    projects: (db) => new ProjectsStore(db),
    apiKeys: (db) => new ApiKeysStore(db),
    settings: (db) => new SettingsStore(db),
    users: (db) => new UsersStore(db),
    memberships: (db) => new MembershipsStore(db, clock, EXTEND_IN_FLIGHT[database.kind]),
    // The import streams rows over a connection of its own (COPY), whatever handle it is given.
    membershipImport: () => new MembershipImportStore(database),
    bulkExtend: (db) => new BulkExtendStore(db),
    expiry: (db) => new ExpiryStore(db),
    retention: (db) => new RetentionStore(db),
    maintenance: (db) => new MaintenanceStore(db),
    plans: (db) => new PlansStore(db, clock),
    targets: (db) => new TargetsStore(db, clock),
    webhooks: (db) => new WebhooksStore(db),
    deliveries: (db) => new DeliveriesStore(db),
    deliveryLog: (db) => new DeliveryLogStore(db),
    liveEvents: (db) => new LiveEventsStore(db),
    idempotency: (db) => new IdempotencyStore(db),
    instanceSecrets: (db) => new InstanceSecretsStore(db),
    integrations: (db) => new IntegrationsStore(db),
    accessPlan: (db) => new AccessPlanStore(db, clock, { projectBatch: database.kind === 'pglite' ? EMBEDDED_PROJECT_BATCH : PROJECT_BATCH }),
    access: (db) => new AccessStore(db),
    accessReconcile: (db) => new AccessReconcileStore(db),
    accessWorker: (db) => new AccessWorkerStore(db),
    botLeases: (db) => new BotLeasesStore(db),
    telegramInvites: (db) => new TelegramInvitesStore(db),
    telegramUpdates: (db) => new TelegramUpdatesStore(db),
    telegramReconcile: (db) => new TelegramReconcileStore(db),
    merchantAccounts: (db) => new MerchantAccountsStore(db),
    payments: (db) => new PaymentsStore(db),
    // Exports stream COPY over a connection of their own from the pool (PostgreSQL).
    exports: (db) => new ExportsStore(db, database),
    analytics: (db) => new AnalyticsStore(db),
    paymentReversals: (db) => new PaymentReversalsStore(db),
    paidMemberships: (db) => new PaidMembershipsStore(db),
    stripeEvents: (db) => new StripeEventsStore(db),
    coupons: (db) => new CouponsStore(db),
    admins: (db) => new AdminsStore(db),
    payLinks: (db) => new PayLinksStore(db),
    dashboardSessions: (db) => new DashboardSessionsStore(db),
    dashboardAudit: (db) => new DashboardAuditStore(db),
    dashboardOverview: (db) => new DashboardOverviewStore(db),
    dashboardMembers: (db) => new DashboardMembersStore(db),
    portalLinks: (db) => new PortalLinksStore(db),
    invoicing: (db) => new InvoicingStore(db),
    discordFrontDesk: (db) => new DiscordFrontDeskStore(db),
    notifications: (db) => new NotificationsStore(db),
    reminders: (db) => new RemindersStore(db),
    memberNotifications: (db) => new MemberNotificationsStore(db),
    web: (db) => new WebStore(db),
    guildJoins: (db) => new GuildJoinsStore(db),
  };
}

export function createStores(database: Database, clock: Clock): Stores {
  const factories = storeFactories(database, clock);
  const stores = {} as Record<keyof Stores, unknown>;
  for (const name of Object.keys(factories) as (keyof Stores)[]) stores[name] = factories[name](database.db);
  return stores as Stores;
}

/**
 * The stores bound to one transaction, each built the first time the use case reaches for it (a
 * use case touches two or three of them).
 */
export function storesOn(tx: Db, database: Database, clock: Clock): Stores {
  const factories = storeFactories(database, clock);
  const built = new Map<keyof Stores, unknown>();
  const stores = {} as Stores;
  for (const name of Object.keys(factories) as (keyof Stores)[]) {
    Object.defineProperty(stores, name, {
      enumerable: true,
      get: () => {
        if (!built.has(name)) built.set(name, factories[name](tx));
        return built.get(name);
      },
    });
  }
  return stores;
}
