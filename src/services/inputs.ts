import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { SecretBox } from '../domain/integrations/secret-box.js';
import type { StripeApi } from '../domain/payments/stripe-api.js';
import type { Transactor } from '../domain/transactions.js';
import type { WebhookSecrets } from '../domain/webhooks/webhook-secrets.js';
import type { Stores } from '../store/stores.js';
import type { Resolver } from '../webhooks/ssrf-guard.js';

/** What every builder of services (src/services.ts) is given: the composition root's parts below the services. */
export interface ServiceInputs {
  stores: Stores;
  transactor: Transactor<Stores>;
  config: Config;
  clock: Clock;
  resolve: Resolver;
  secretBox: SecretBox | null;
  webhookSecrets: WebhookSecrets;
  stripe: StripeApi;
  logger: Logger;
}

/** A failed Discord call, logged as a warning: only the error's class and message, since a Discord error never carries the bot token, but its request might. */
export function discordWarning(logger: Logger, what: string): (err: unknown) => void {
  return (err) => logger.warn({ err: { type: (err as Error)?.name, message: (err as Error)?.message } }, what);
}

/** The public URL without its trailing slashes, as the pages and OAuth redirects join paths to it. */
export function publicBase(config: Config): string {
  return config.frontDesk.publicUrl.replace(/\/+$/, '');
}
