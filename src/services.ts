import type { Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import { MembershipsService } from './domain/memberships/memberships.service.js';
import { PlansService } from './domain/plans/plans.service.js';
import { ApiKeysService } from './domain/projects/api-keys.service.js';
import { AuthService } from './domain/projects/auth.service.js';
import { ProjectsService } from './domain/projects/projects.service.js';
import { SettingsService } from './domain/settings/settings.service.js';
import { TargetsService } from './domain/targets/targets.service.js';
import { UsersService } from './domain/users/users.service.js';
import { WebhooksService } from './domain/webhooks/webhooks.service.js';
import { LiveTokenService } from './live/live-tokens.js';
import { ApiKeysStore } from './store/api-keys.store.js';
import type { Database } from './store/db.js';
import { DeliveryLogStore } from './store/delivery-log.store.js';
import { InstanceSecretsStore } from './store/instance-secrets.store.js';
import { MembershipsStore } from './store/memberships.store.js';
import { PlansStore } from './store/plans.store.js';
import { ProjectsStore } from './store/projects.store.js';
import { SettingsStore } from './store/settings.store.js';
import { TargetsStore } from './store/targets.store.js';
import { UsersStore } from './store/users.store.js';
import { WebhooksStore } from './store/webhooks.store.js';
import { systemResolver, type Resolver } from './webhooks/ssrf-guard.js';

/** Every service, wired in one place; the HTTP app and the CLI both start from here. */
export interface Services {
  auth: AuthService;
  projects: ProjectsService;
  apiKeys: ApiKeysService;
  settings: SettingsService;
  users: UsersService;
  memberships: MembershipsService;
  webhooks: WebhooksService;
  membershipsStore: MembershipsStore;
  plans: PlansService;
  targets: TargetsService;
  liveTokens: LiveTokenService;
}

export function createServices(
  database: Database,
  config: Config,
  clock: Clock = systemClock,
  /** How webhook hosts are resolved for the SSRF guard; tests map names to addresses. */
  resolve: Resolver = systemResolver,
): Services {
  const projectsStore = new ProjectsStore(database.db);
  const membershipsStore = new MembershipsStore(database.db);
  const auth = new AuthService(projectsStore, config.auth.cacheTtlMs);
  const projects = new ProjectsService(projectsStore);
  return {
    auth,
    projects,
    apiKeys: new ApiKeysService(new ApiKeysStore(database.db), projects, auth),
    settings: new SettingsService(new SettingsStore(database.db)),
    users: new UsersService(new UsersStore(database.db)),
    memberships: new MembershipsService(membershipsStore, clock),
    webhooks: new WebhooksService(new WebhooksStore(database.db), new DeliveryLogStore(database.db), clock, {
      allowPrivate: config.webhooks.allowPrivate,
      maxPerProject: config.webhooks.maxPerProject,
      resolve,
    }),
    membershipsStore,
    plans: new PlansService(new PlansStore(database.db)),
    targets: new TargetsService(new TargetsStore(database.db)),
    liveTokens: new LiveTokenService(
      new InstanceSecretsStore(database.db),
      { ttlSeconds: config.live.tokenTtlSeconds, secret: config.live.tokenSecret },
      clock,
    ),
  };
}
