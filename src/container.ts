import type { Logger } from 'pino';
import { storageOf, type Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import { MembershipsService } from './domain/memberships/memberships.service.js';
import { PlansService } from './domain/plans/plans.service.js';
import { ApiKeysService } from './domain/projects/api-keys.service.js';
import { AuthService } from './domain/projects/auth.service.js';
import { KeyRevocations } from './domain/projects/key-revocations.js';
import { ProjectsService } from './domain/projects/projects.service.js';
import { SettingsService } from './domain/settings/settings.service.js';
import { TargetsService } from './domain/targets/targets.service.js';
import { UsersService } from './domain/users/users.service.js';
import { WebhooksService } from './domain/webhooks/webhooks.service.js';
import { LiveTokenService } from './live/live-tokens.js';
import { createRateLimiter } from './ratelimit/create-limiter.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { ApiKeysStore } from './store/api-keys.store.js';
import { BulkExtendStore } from './store/bulk-extend.store.js';
import { openDatabase, type Database, type OpenOptions, type StorageOptions } from './store/db.js';
import { DeliveriesStore } from './store/deliveries.store.js';
import { DeliveryLogStore } from './store/delivery-log.store.js';
import { ExpiryStore } from './store/expiry.store.js';
import { IdempotencyStore } from './store/idempotency.store.js';
import { InstanceSecretsStore } from './store/instance-secrets.store.js';
import { LiveEventsStore } from './store/live-events.store.js';
import { MembershipImportStore } from './store/membership-import.store.js';
import { MembershipsStore } from './store/memberships.store.js';
import { PlansStore } from './store/plans.store.js';
import { ProjectsStore } from './store/projects.store.js';
import { SettingsStore } from './store/settings.store.js';
import { TargetsStore } from './store/targets.store.js';
import { UsersStore } from './store/users.store.js';
import { WebhooksStore } from './store/webhooks.store.js';
import { systemResolver, type Resolver } from './webhooks/ssrf-guard.js';

/**
 * The composition root: the one place that builds tenure's object graph, once per process
 * (config → database → stores → services → limiter → auth cache → outbox listeners). The HTTP app,
 * the live gateway, the worker runtime and the CLI each receive the container and take what they
 * need; nothing else constructs a store or a service.
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
  plans: PlansStore;
  targets: TargetsStore;
  webhooks: WebhooksStore;
  deliveries: DeliveriesStore;
  deliveryLog: DeliveryLogStore;
  liveEvents: LiveEventsStore;
  idempotency: IdempotencyStore;
  instanceSecrets: InstanceSecretsStore;
}

export interface Services {
  /** Resolves API keys, with this process's one key cache. */
  auth: AuthService;
  projects: ProjectsService;
  apiKeys: ApiKeysService;
  settings: SettingsService;
  users: UsersService;
  memberships: MembershipsService;
  webhooks: WebhooksService;
  plans: PlansService;
  targets: TargetsService;
  liveTokens: LiveTokenService;
}

export interface Container {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How webhook hosts are resolved for the SSRF guard (the service's checks and the worker's). */
  readonly resolve: Resolver;
  readonly database: Database;
  readonly stores: Stores;
  readonly services: Services;
  /** The REST rate limiter the config asks for; its Redis connection opens on first use. */
  readonly limiter: RateLimiter;
  readonly keyRevocations: KeyRevocations;
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
  const database = o.database ?? (await openDatabase(o.storage ?? storageOf(config), { logger, ...o.open }));
  try {
    if (ownsDatabase) await database.migrate();
  } catch (err) {
    await database.close();
    throw err;
  }

  const stores = createStores(database, clock);
  const services = createServices(stores, config, clock, resolve);
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
    services,
    get limiter() {
      return (limiter ??= createRateLimiter(config, logger));
    },
    keyRevocations,
    listen: () => keyRevocations.start(),
    async close() {
      await Promise.all([keyRevocations.stop(), limiter?.close()]);
      if (ownsDatabase) await database.close();
    },
  };
}

function createStores(database: Database, clock: Clock): Stores {
  const { db } = database;
  return {
    projects: new ProjectsStore(db),
    apiKeys: new ApiKeysStore(db),
    settings: new SettingsStore(db),
    users: new UsersStore(db),
    memberships: new MembershipsStore(db, clock),
    membershipImport: new MembershipImportStore(database, clock),
    bulkExtend: new BulkExtendStore(db),
    expiry: new ExpiryStore(db),
    plans: new PlansStore(db),
    targets: new TargetsStore(db),
    webhooks: new WebhooksStore(db),
    deliveries: new DeliveriesStore(db),
    deliveryLog: new DeliveryLogStore(db),
    liveEvents: new LiveEventsStore(db),
    idempotency: new IdempotencyStore(db),
    instanceSecrets: new InstanceSecretsStore(db),
  };
}

function createServices(stores: Stores, config: Config, clock: Clock, resolve: Resolver): Services {
  const auth = new AuthService(stores.projects, config.auth.cacheTtlMs);
  const projects = new ProjectsService(stores.projects);
  return {
    auth,
    projects,
    apiKeys: new ApiKeysService(stores.apiKeys, projects, auth),
    settings: new SettingsService(stores.settings),
    users: new UsersService(stores.users),
    memberships: new MembershipsService(stores.memberships, clock, stores.bulkExtend),
    webhooks: new WebhooksService(stores.webhooks, stores.deliveryLog, clock, {
      allowPrivate: config.webhooks.allowPrivate,
      maxPerProject: config.webhooks.maxPerProject,
      resolve,
    }),
    plans: new PlansService(stores.plans),
    targets: new TargetsService(stores.targets),
    liveTokens: new LiveTokenService(
      stores.instanceSecrets,
      { ttlSeconds: config.live.tokenTtlSeconds, secret: config.live.tokenSecret },
      clock,
    ),
  };
}
