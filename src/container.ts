import type { Logger } from 'pino';
import { storageOf, type Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import { instanceSecretBox, type KeyHome } from './domain/integrations/encryption-key.js';
import type { SecretBox } from './domain/integrations/secret-box.js';
import type { StripeApi } from './domain/payments/stripe-api.js';
import { KeyRevocations } from './domain/projects/key-revocations.js';
import { sealStoredSecrets, WebhookSecrets } from './domain/webhooks/webhook-secrets.js';
import { stripeApi } from './payments/stripe/stripe-api.js';
import { createRateLimiter } from './ratelimit/create-limiter.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { openDatabase, type Database, type OpenOptions, type StorageOptions } from './database/db.js';
import { createStores, type Stores } from './store/stores.js';
import { StoreTransactor } from './store/transactions.js';
import type { Transactor } from './domain/transactions.js';
import { systemResolver, type Resolver } from './webhooks/ssrf-guard.js';
import { createServices, type Services } from './services.js';

/**
 * The composition root: the one place that builds tenure's object graph, once per process
 * (config → database → stores (store/stores.ts) → services → limiter → auth cache → outbox
 * listeners). The HTTP app, the live gateway, the worker runtime and the CLI each receive the
 * container and take what they need; nothing else constructs a store or a service.
 */

export interface Container {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How webhook hosts are resolved for the SSRF guard (the service's checks and the worker's). */
  readonly resolve: Resolver;
  readonly database: Database;
  readonly stores: Stores;
  /** Runs a use case of several statements in one transaction (src/domain/transactions.ts). */
  readonly transactor: Transactor<Stores>;
  readonly services: Services;
  /** The REST rate limiter the config asks for; its Redis connection opens on first use. */
  readonly limiter: RateLimiter;
  readonly keyRevocations: KeyRevocations;
  /**
   * Seals and opens bot tokens with the instance's encryption key (docs/access.md, "Connecting a
   * bot"); null on PostgreSQL without TENURE_ENCRYPTION_KEY, where no bot can be connected.
   */
  readonly secretBox: SecretBox | null;
  /**
   * Webhook signing secrets at rest: sealed with the secret box, opened by the delivery worker;
   * kept as they are where there is no box (docs/webhooks.md, "Decisions").
   */
  readonly webhookSecrets: WebhookSecrets;
  /** tenure's calls to Stripe (stripe-node at TENURE_STRIPE_API_URL): the services' and the payments reconciler's. */
  readonly stripe: StripeApi;
  /** Starts the listeners a serving process needs (key revocations from other nodes). */
  listen(): Promise<void>;
  /** Stops the listeners and the limiter, then closes the database (and its LISTEN connection) if the container opened it. */
  close(): Promise<void>;
}

export interface ContainerOptions {
  config: Config;
  logger: Logger;
  /** An open database to use (not closed by the container); by default the config's is opened and migrated. */
  database?: Database;
  /** Where to open the database instead of the config's storage (tests). */
  storage?: StorageOptions;
  open?: OpenOptions;
  clock?: Clock;
  resolve?: Resolver;
}

export async function createContainer(o: ContainerOptions): Promise<Container> {
  const { config, logger } = o;
  const clock = o.clock ?? systemClock;
  const resolve = o.resolve ?? systemResolver;
  const ownsDatabase = o.database === undefined;
  const storage = o.database ? null : (o.storage ?? storageOf(config));
  // Before the database opens: a malformed TENURE_ENCRYPTION_KEY stops the start at once.
  const secretBox = await instanceSecretBox(config.access.encryptionKey, keyHome(storage, o.database));
  const database = o.database ?? (await openDatabase(storage!, { logger, ...o.open }));
  try {
    if (ownsDatabase) await database.migrate();
  } catch (err) {
    await database.close();
    throw err;
  }

  const stores = createStores(database, clock);
  // What a service runs a use case of several statements in: one transaction, stores bound to it.
  const transactor = new StoreTransactor(database, clock);
  const webhookSecrets = new WebhookSecrets(secretBox);
  try {
    // After the migrations, like them: secrets stored before sealing (or without a key) are sealed.
    if (ownsDatabase) await sealStoredSecrets(stores.webhooks, webhookSecrets);
  } catch (err) {
    await database.close();
    throw err;
  }
  const stripe = stripeApi(config.payments.stripe);
  const services = createServices(stores, transactor, config, clock, resolve, secretBox, webhookSecrets, stripe, logger);
  let limiter: RateLimiter | null = null;
  // The LISTEN connection opens at the first subscription (listen()), not here.
  const keyRevocations = new KeyRevocations(database.notifications, services.auth);

  return {
    config,
    logger,
    clock,
    resolve,
    database,
    stores,
    transactor,
    services,
    get limiter() {
      return (limiter ??= createRateLimiter(config, logger));
    },
    keyRevocations,
    secretBox,
    webhookSecrets,
    stripe,
    listen: () => keyRevocations.start(),
    async close() {
      await Promise.all([keyRevocations.stop(), limiter?.close()]);
      if (ownsDatabase) await database.close();
    },
  };
}

/** Where the key lives without TENURE_ENCRYPTION_KEY: beside the embedded data it protects. */
function keyHome(storage: StorageOptions | null, database: Database | undefined): KeyHome {
  if (storage?.kind === 'pglite') return { kind: 'data-dir', dataDir: storage.dataDir };
  // A database handed in (tests, benches) is embedded only in memory: its key lives as long.
  if (storage?.kind === 'pglite-memory' || database?.kind === 'pglite') return { kind: 'memory' };
  return { kind: 'none' };
}
