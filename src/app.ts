import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Container } from './container.js';
import { isUuid } from './domain/ids.js';
import { registerJsonParser } from './http/content-type.js';
import { registerErrorHandling, sendError, toAppError } from './http/errors.js';
import { registerGate } from './http/gate.hook.js';
import { RequestLogController, requestLoggerFactory } from './http/request-log.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerOpenApi } from './http/openapi.js';
import { accessRoutes } from './http/routes/access/access.routes.js';
import { apiKeysRoutes } from './http/routes/api-keys/api-keys.routes.js';
import { liveUpdatesRoutes } from './http/routes/live-updates/live-updates.routes.js';
import { checkoutRoutes } from './http/routes/checkout/checkout.routes.js';
import { couponsRoutes } from './http/routes/coupons/coupons.routes.js';
import { adminsRoutes } from './http/routes/admins/admins.routes.js';
import { exportsRoutes } from './http/routes/exports/exports.routes.js';
import { analyticsRoutes } from './http/routes/analytics/analytics.routes.js';
import { healthRoutes } from './http/routes/health/health.routes.js';
import { integrationsRoutes } from './http/routes/integrations/integrations.routes.js';
import { membershipsRoutes } from './http/routes/memberships/memberships.routes.js';
import { merchantAccountsRoutes } from './http/routes/merchant-accounts/merchant-accounts.routes.js';
import { paymentsRoutes } from './http/routes/payments/payments.routes.js';
import { payLinksRoutes } from './http/routes/pay-links/pay-links.routes.js';
import { portalLinksRoutes } from './http/routes/portal-links/portal-links.routes.js';
import { invoicingRoutes } from './http/routes/invoicing/invoicing.routes.js';
import { registerPages } from './http/pages/pages.plugin.js';
import { registerDashboard } from './http/dashboard/dashboard.plugin.js';
import { plansRoutes } from './http/routes/plans/plans.routes.js';
import { settingsRoutes } from './http/routes/settings/settings.routes.js';
import { stripeEventsRoutes } from './http/routes/stripe-events/stripe-events.routes.js';
import { discordInteractionsRoutes } from './http/routes/discord-interactions/discord-interactions.routes.js';
import { targetsRoutes } from './http/routes/targets/targets.routes.js';
import { telegramUpdatesRoutes } from './http/routes/telegram-updates/telegram-updates.routes.js';
import { usersRoutes } from './http/routes/users/users.routes.js';
import { memberNotificationsRoutes } from './http/routes/users/notifications.routes.js';
import { webhooksRoutes } from './http/routes/webhooks/webhooks.routes.js';
import { trustProxy } from './http/trust-proxy.js';
import { buildSerializer } from './http/serialization.js';
import { registerStrictQueries, validatorCompiler } from './http/validation.js';
import { registerDraining } from './observability/draining.hook.js';
import { registerHttpMetrics } from './observability/http-metrics.hook.js';
import { createMetrics, type Metrics } from './observability/metrics.js';

/** What the app takes from the container; `logger` may differ (a test's sink, Fastify's own child). */
export type AppDeps = Pick<Container, 'config' | 'database' | 'stores' | 'services' | 'limiter' | 'clock'> & {
  logger: FastifyBaseLogger;
};

const BODY_LIMIT = 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus metrics; the live gateway sets its connection count source here. */
    metrics: Metrics;
  }
}

/** A client's X-Request-Id is adopted only when it is a UUID; anything else gets a fresh one. */
function requestId(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && isUuid(sent) ? sent.toLowerCase() : randomUUID();
}

/**
 * Builds the HTTP app from the container's services (src/container.ts). It never listens:
 * `server.ts` does, and tests use `app.inject`. The container owns the limiter and closes it.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { services, limiter } = deps;

  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: requestId,
    requestIdHeader: false,
    logController: new RequestLogController(deps.logger),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: BODY_LIMIT,
    trustProxy: trustProxy(deps.config.http.trustProxy),
    // Errors raised before routing (a malformed URL, say) still get the envelope.
    frameworkErrors: (error, request, reply) => sendError(reply, toAppError(error, request)),
    // Requests arriving while the app closes get the envelope's 503 instead (registerDraining).
    return503OnClosing: false,
    // Each distinct response schema compiled once (src/http/serialization.ts).
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  registerStrictQueries(app);
  registerJsonParser(app);
  registerErrorHandling(app);
  registerDraining(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  const metrics = createMetrics({ deliveries: deps.stores.deliveries, access: deps.stores.accessWorker });
  app.decorate('metrics', metrics);
  registerHttpMetrics(app, metrics);
  registerGate(app, { auth: services.auth, limiter, onRefused: (policy) => metrics.rateLimited(policy) });
  // Before every route: it equips each project POST as the route registers.
  registerIdempotency(app, { store: deps.stores.idempotency, clock: deps.clock });
  // Before every route: the OpenAPI document is collected from the routes as they register.
  await registerOpenApi(app);

  await app.register(membershipsRoutes, { memberships: services.memberships });
  await app.register(exportsRoutes, { exports: services.exports });
  await app.register(analyticsRoutes, { analytics: services.analytics });
  await app.register(webhooksRoutes, { webhooks: services.webhooks });
  await app.register(apiKeysRoutes, { apiKeys: services.apiKeys });
  await app.register(integrationsRoutes, { integrations: services.integrations });
  await app.register(settingsRoutes, { settings: services.settings });
  await app.register(usersRoutes, { users: services.users });
  await app.register(memberNotificationsRoutes, { notifications: services.memberNotifications });
  await app.register(plansRoutes, { plans: services.plans });
  await app.register(targetsRoutes, { targets: services.targets });
  await app.register(accessRoutes, { access: services.access });
  await app.register(merchantAccountsRoutes, { merchantAccounts: services.merchantAccounts });
  await app.register(couponsRoutes, { coupons: services.coupons });
  await app.register(adminsRoutes, { admins: services.admins });
  await app.register(checkoutRoutes, { checkout: services.checkout });
  await app.register(payLinksRoutes, { payLinks: services.payLinks });
  await app.register(portalLinksRoutes, { portal: services.portal });
  await app.register(invoicingRoutes, { invoicing: services.invoicing });
  await app.register(stripeEventsRoutes, { stripeEvents: services.stripeEvents });
  await app.register(discordInteractionsRoutes, { discordInteractions: services.discordInteractions });
  await app.register(paymentsRoutes, { payments: services.payments });
  await app.register(healthRoutes, {
    db: deps.database.db,
    redisUrl: deps.config.redisUrl,
    metrics,
    metricsToken: deps.config.ops.metricsToken,
  });
  await app.register(liveUpdatesRoutes, { liveTokens: services.liveTokens });
  await app.register(telegramUpdatesRoutes, { telegramWebhook: services.telegramWebhook });
  // The pages members open (docs/front-desk.md): HTML, no key, their own error page.
  await registerPages(app, {
    payLinks: services.payLinks, payPolicies: services.payPolicies, portal: services.portal, portalActions: services.portalActions, publicUrl: deps.config.frontDesk.publicUrl,
    web: { pages: services.publicPages, login: services.discordLogin, telegram: services.telegramLogin },
    discordOrigin: new URL(deps.config.access.discordApiUrl).origin,
  });
  // The owner's dashboard (docs/dashboard.md): HTML, signed-in sessions, its own error page.
  await registerDashboard(app, { services, publicUrl: deps.config.frontDesk.publicUrl, discordOrigin: new URL(deps.config.access.discordApiUrl).origin });

  // Start serving with the shared limiter connected when it can be; the insurance covers a slow Redis.
  app.addHook('onReady', () => limiter.ready());
  return app;
}
