import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './domain/clock.js';
import type { SecretBox } from './domain/integrations/secret-box.js';
import type { StripeApi } from './domain/payments/stripe-api.js';
import type { Transactor } from './domain/transactions.js';
import type { WebhookSecrets } from './domain/webhooks/webhook-secrets.js';
import { accessServices, type AccessServices } from './services/access.js';
import { catalogueServices, type CatalogueServices } from './services/catalogue.js';
import { dashboardServices, type DashboardServices } from './services/dashboard.js';
import { frontDeskServices, type FrontDeskServices } from './services/front-desk.js';
import type { ServiceInputs } from './services/inputs.js';
import { memberServices, type MemberServices } from './services/members.js';
import { paymentServices, type PaymentServices } from './services/payments.js';
import { projectServices, type ProjectServices } from './services/projects.js';
import { webServices, type WebServices } from './services/web.js';
import type { Stores } from './store/stores.js';
import type { Resolver } from './webhooks/ssrf-guard.js';

/**
 * The services of the composition root (src/container.ts): each built once per process from the
 * stores, the transactor and the configuration, and handed to the app, the workers and the CLI.
 * Each capability's services are built in src/services/ (one builder a capability, given the
 * inputs and the services built before it that it uses); this is the one place that builds them all.
 */
export type Services = ProjectServices & AccessServices & CatalogueServices & MemberServices & PaymentServices & FrontDeskServices & WebServices & DashboardServices;

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
  const inputs: ServiceInputs = { stores, transactor, config, clock, resolve, secretBox, webhookSecrets, stripe, logger };
  // In the order the builders use each other's services.
  const projects = projectServices(inputs);
  const access = accessServices(inputs);
  const catalogue = catalogueServices(inputs, access);
  const members = memberServices(inputs);
  const payments = paymentServices(inputs, catalogue);
  const frontDesk = frontDeskServices(inputs, { ...catalogue, ...payments, ...access });
  const web = webServices(inputs, frontDesk);
  const dashboard = dashboardServices(inputs, { ...members, ...payments, ...access, ...frontDesk });
  return { ...projects, ...access, ...catalogue, ...members, ...payments, ...frontDesk, ...web, ...dashboard };
}
