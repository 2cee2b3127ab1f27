import type { Logger } from 'pino';
import { discordCommandRegistrar, discordFollowUps } from './access/discord/front-desk-calls.js';
import { discordTokenCheck } from './access/discord/token-check.js';
import { telegramTokenCheck } from './access/telegram/token-check.js';
import type { Config } from './config.js';
import { AccessService } from './domain/access/access.service.js';
import type { Clock } from './domain/clock.js';
import { DiscordCommandsRegistration } from './domain/front-desk/discord-commands-registration.js';
import { DiscordInteractions } from './domain/front-desk/discord-interactions.js';
import { IntegrationsService } from './domain/integrations/integrations.service.js';
import type { SecretBox } from './domain/integrations/secret-box.js';
import { TelegramWebhookSecrets } from './domain/integrations/telegram-webhook-secret.js';
import { TelegramWebhookService } from './domain/integrations/telegram-webhook.service.js';
import { PAY_LINK_TTL_MS, PayLinksService } from './domain/front-desk/pay-links.service.js';
import { PortalActions } from './domain/front-desk/portal-actions.js';
import { PortalService } from './domain/front-desk/portal.service.js';
import { CheckoutCustomers } from './domain/invoicing/checkout-customer.js';
import { InvoicingService } from './domain/invoicing/invoicing.service.js';
import { ExportsService } from './domain/exports/exports.service.js';
import { AnalyticsService } from './domain/analytics/analytics.service.js';
import { MembershipsService } from './domain/memberships/memberships.service.js';
import { CheckoutCoupons } from './domain/payments/checkout-coupons.js';
import { CheckoutService } from './domain/payments/checkout.service.js';
import { CheckoutPolicies } from './domain/payments/checkout-policies.js';
import { CouponsService } from './domain/payments/coupons.service.js';
import { AdminsService } from './domain/admins/admins.service.js';
import { DashboardAudit } from './domain/dashboard/audit.service.js';
import { DashboardOverview } from './domain/dashboard/overview.service.js';
import { DashboardSessions } from './domain/dashboard/sessions.service.js';
import { DashboardSignIn } from './domain/dashboard/sign-in.service.js';
import { DashboardMemberActions } from './domain/dashboard-members/member-actions.js';
import { DashboardMembersService } from './domain/dashboard-members/members.service.js';
import { MerchantAccountsService } from './domain/payments/merchant-accounts.service.js';
import { PaymentsService } from './domain/payments/payments.service.js';
import { StripeEventsService } from './domain/payments/stripe-events.service.js';
import type { StripeApi } from './domain/payments/stripe-api.js';
import { PlansService } from './domain/plans/plans.service.js';
import { ApiKeysService } from './domain/projects/api-keys.service.js';
import { AuthService } from './domain/projects/auth.service.js';
import { ProjectsService } from './domain/projects/projects.service.js';
import { SettingsService } from './domain/settings/settings.service.js';
import { DEFAULT_SETTINGS } from './domain/settings/settings.catalogue.js';
import { TargetsService } from './domain/targets/targets.service.js';
import { UsersService } from './domain/users/users.service.js';
import { MemberNotificationsService } from './domain/users/member-notifications.service.js';
import { DiscordLoginService } from './domain/web/discord-login.service.js';
import { PublicPageService } from './domain/web/public-page.js';
import { TelegramLoginService } from './domain/web/telegram-login.service.js';
import { discordOAuth } from './web/discord-oauth.js';
import { checkTelegramLogin } from './web/telegram-login.js';
import type { WebhookSecrets } from './domain/webhooks/webhook-secrets.js';
import { WebhooksService } from './domain/webhooks/webhooks.service.js';
import { LiveTokenService } from './live/live-tokens.js';
import type { Stores } from './store/stores.js';
import type { Transactor } from './domain/transactions.js';
import type { Resolver } from './webhooks/ssrf-guard.js';

/**
 * The services of the composition root (src/container.ts): each built once per process from the
 * stores, the transactor and the configuration, and handed to the app, the workers and the CLI.
 */

export interface Services {
  /** Resolves API keys, with this process's one key cache. */
  auth: AuthService;
  projects: ProjectsService;
  apiKeys: ApiKeysService;
  settings: SettingsService;
  users: UsersService;
  /** What each member was sent (docs/lifecycle.md). */
  memberNotifications: MemberNotificationsService;
  memberships: MembershipsService;
  webhooks: WebhooksService;
  plans: PlansService;
  targets: TargetsService;
  liveTokens: LiveTokenService;
  /** Bot connections: the token checked with the platform, sealed with the secret box (docs/access.md). */
  integrations: IntegrationsService;
  /** The access rows and their resync (docs/access.md). */
  access: AccessService;
  /** Telegram's deliveries of a bot's updates to the webhook route (TENURE_TELEGRAM_UPDATES=webhook). */
  telegramWebhook: TelegramWebhookService;
  /** Merchant accounts: the Stripe key checked with Stripe, sealed with the secret box (docs/payments.md). */
  merchantAccounts: MerchantAccountsService;
  /** Stripe Checkout Sessions for a member and a plan (docs/payments.md, "Checkout"). */
  checkout: CheckoutService;
  /** Stripe's events (the webhook route, reconciliation) turned into payments and memberships. */
  stripeEvents: StripeEventsService;
  /** The payments recorded from Stripe's events (docs/payments.md, "Payments"). */
  payments: PaymentsService;
  /** Memberships and payments as one streamed file (docs/memberships.md, "Export"). */
  exports: ExportsService;
  /** Money and growth: MRR, members, churn, revenue over a period (docs/analytics.md). */
  analytics: AnalyticsService;
  /** A project's coupons (docs/coupons.md); checkout applies them. */
  coupons: CouponsService;
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
  /** Pay links: a plan bound to one member, paid on Stripe's checkout page (docs/front-desk.md); the chats hand them out. */
  payLinks: PayLinksService;
  /** The project's policies a pay link shows and the buyer confirms before paying (setting policies, docs/front-desk.md). */
  payPolicies: CheckoutPolicies;
  /** The member's portal: single-use links to their memberships, payments and Stripe billing (docs/front-desk.md). */
  portal: PortalService;
  /** The portal's forms: a renewal cancelled or resumed, a Telegram invite, invoicing details (docs/portal.md). */
  portalActions: PortalActions;
  /** Members' invoicing details, passed to Stripe as the customer's (docs/portal.md). */
  invoicing: InvoicingService;
  /** Discord's interactions with the project's bot: commands and buttons for members (docs/front-desk.md). */
  discordInteractions: DiscordInteractions;
  /** Registers the commands for members in the guilds of a project's Discord targets. */
  discordCommands: DiscordCommandsRegistration;
  /** The public plan page of a project (docs/web.md). */
  publicPages: PublicPageService;
  /** Login with Discord for a web buyer: their Discord id becomes their pay link's member (docs/web.md). */
  discordLogin: DiscordLoginService;
  /** Signing in with the Telegram Login Widget: a buyer's pay link, or a member's portal (docs/web.md). */
  telegramLogin: TelegramLoginService;
}

export function createServices(
  stores: Stores,
  transactor: Transactor<Stores>,
  config: Config,
  clock: Clock,
  resolve: Resolver,
  secretBox: SecretBox | null,
  webhookSecrets: WebhookSecrets,
  stripe: StripeApi,
  logger: Logger,
): Services {
  const auth = new AuthService(stores.projects, config.auth.cacheTtlMs);
  const projects = new ProjectsService(stores.projects);
  // A plan created without a currency takes the project's default_currency (docs/plans-targets.md).
  const plans = new PlansService(stores.plans, async (projectId) => {
    const stored = (await stores.settings.get(projectId, 'default_currency'))?.value;
    return typeof stored === 'string' ? stored : DEFAULT_SETTINGS.default_currency;
  });
  const invoicing = new InvoicingService(stores.invoicing, clock);
  const checkout = new CheckoutService(
    stores.merchantAccounts,
    stores.payments,
    plans,
    secretBox,
    stripe,
    new CheckoutCoupons(stores.coupons, transactor, stripe, clock),
    new CheckoutCustomers(invoicing, stripe),
    // collect_email_on_subscribe: the buyer's e-mail is kept on their user (docs/payments.md, "Checkout").
    async (projectId) => ({ collectEmail: (await stores.settings.get(projectId, 'collect_email_on_subscribe'))?.value === true }),
    () => clock.now(),
  );
  const stripeEvents = new StripeEventsService(stores.merchantAccounts, transactor, secretBox, stripe, clock, { graceMs: config.payments.gracePeriodMs });
  const { publicUrl } = config.frontDesk;
  const payLinkService = new PayLinksService(
    transactor,
    stores.payLinks,
    plans,
    checkout,
    stores.merchantAccounts,
    stores.memberships,
    stripeEvents,
    stripe,
    secretBox,
    clock,
    { publicUrl, ttlMs: PAY_LINK_TTL_MS },
    stores.guildJoins,
    stores.web,
  );
  // Only the error's class and message: a Discord error never carries the bot token, but its request might.
  const logDiscord = (what: string) => (err: unknown) =>
    logger.warn({ err: { type: (err as Error)?.name, message: (err as Error)?.message } }, what);
  const discordCommands = new DiscordCommandsRegistration(
    stores.discordFrontDesk,
    secretBox,
    discordCommandRegistrar(config.access.discordApiUrl),
    logDiscord('registering the Discord commands failed'),
  );
  const portal = new PortalService({
    transactor,
    links: stores.portalLinks,
    accounts: stores.merchantAccounts,
    stripe,
    invoicing,
    box: secretBox,
    clock,
    publicUrl,
  });
  const access = new AccessService(stores.access, stores.accessPlan, stores.telegramInvites, clock);
  const portalActions = new PortalActions({
    links: stores.portalLinks,
    accounts: stores.merchantAccounts,
    stripe,
    stripeEvents,
    invoicing,
    access,
    invites: stores.telegramInvites,
    box: secretBox,
    clock,
  });
  const users = new UsersService(stores.users);
  const memberNotifications = new MemberNotificationsService(stores.memberNotifications);
  const memberships = new MembershipsService(stores.memberships, clock, transactor, stores.bulkExtend);
  const payments = new PaymentsService(stores.payments);
  const dashboardAudit = new DashboardAudit(stores.dashboardAudit, clock);
  const dashboardSessions = new DashboardSessions(stores.dashboardSessions, clock, { publicUrl });
  return {
    auth,
    projects,
    apiKeys: new ApiKeysService(stores.apiKeys, auth, { maxPerProject: config.auth.maxKeysPerProject }),
    settings: new SettingsService(stores.settings),
    users,
    memberNotifications,
    memberships,
    webhooks: new WebhooksService(stores.webhooks, stores.deliveryLog, webhookSecrets, clock, {
      allowPrivate: config.webhooks.allowPrivate,
      maxPerProject: config.webhooks.maxPerProject,
      resolve,
    }),
    plans,
    // A Discord target created or deleted may change the guilds the commands are registered in.
    targets: new TargetsService(stores.targets, (projectId) => void discordCommands.register(projectId)),
    liveTokens: new LiveTokenService(
      stores.instanceSecrets,
      { ttlSeconds: config.live.tokenTtlSeconds, secret: config.live.tokenSecret },
      clock,
    ),
    // Connecting a bot plans the whole project (the planner's store).
    integrations: new IntegrationsService(
      stores.integrations,
      secretBox,
      { discord: discordTokenCheck(config.access.discordApiUrl), telegram: telegramTokenCheck(config.access.telegramApiUrl) },
      stores.accessPlan,
      clock,
      async (projectId, platform) => {
        if (platform === 'discord') await discordCommands.register(projectId);
      },
    ),
    access,
    telegramWebhook: new TelegramWebhookService(
      stores.telegramUpdates,
      TelegramWebhookSecrets.of(secretBox),
      { enabled: config.access.telegram.updates === 'webhook' },
      clock,
    ),
    merchantAccounts: new MerchantAccountsService(stores.merchantAccounts, secretBox, stripe, clock),
    checkout,
    stripeEvents,
    payments,
    exports: new ExportsService(stores.exports, clock),
    analytics: new AnalyticsService(stores.analytics, clock),
    coupons: new CouponsService(stores.coupons, clock),
    admins: new AdminsService(stores.admins),
    dashboardSessions,
    dashboardSignIn: new DashboardSignIn(stores.dashboardSessions, stores.web, dashboardSessions, discordOAuth(config.access.discordApiUrl), checkTelegramLogin, secretBox, clock, {
      publicUrl: publicUrl.replace(/\/+$/, ''),
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
    payLinks: payLinkService,
    payPolicies: new CheckoutPolicies(
      {
        linkOf: (hash) => stores.payLinks.find(hash),
        storedPolicies: async (projectId) => (await stores.settings.get(projectId, 'policies'))?.value ?? null,
        policiesConfirmed: (projectId, hash) => stores.payments.policiesConfirmed(projectId, hash),
        confirmPolicies: (c, now) => stores.payments.confirmPolicies(c, now),
      },
      clock,
    ),
    portal,
    portalActions,
    invoicing,
    discordInteractions: new DiscordInteractions(
      stores.discordFrontDesk,
      // A plan button's answer: the pressing member's own pay link.
      payLinkService,
      discordFollowUps(config.access.discordApiUrl),
      clock,
      logDiscord('answering a Discord interaction failed'),
      portal,
      // A member who talks to the bot is reachable again (docs/front-desk.md, "Confirmations").
      stores.notifications,
    ),
    discordCommands,
    publicPages: new PublicPageService(stores.web, clock),
    discordLogin: new DiscordLoginService(stores.web, discordOAuth(config.access.discordApiUrl), payLinkService, portal, secretBox, clock, {
      redirectUri: `${publicUrl.replace(/\/+$/, '')}/auth/discord/callback`,
    }),
    telegramLogin: new TelegramLoginService(stores.web, checkTelegramLogin, payLinkService, portal, secretBox, clock, { publicUrl: publicUrl.replace(/\/+$/, '') }),
  };
}
