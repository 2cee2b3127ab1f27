import { ApiKeysService } from '../domain/projects/api-keys.service.js';
import { AuthService } from '../domain/projects/auth.service.js';
import { ProjectsService } from '../domain/projects/projects.service.js';
import { SettingsService } from '../domain/settings/settings.service.js';
import { WebhooksService } from '../domain/webhooks/webhooks.service.js';
import { LiveTokenService } from '../live/live-tokens.js';
import type { ServiceInputs } from './inputs.js';

/** A project and how it is reached: its API keys, settings, webhooks and live-update tokens. */
export interface ProjectServices {
  /** Resolves API keys, with this process's one key cache. */
  auth: AuthService;
  projects: ProjectsService;
  apiKeys: ApiKeysService;
  settings: SettingsService;
  webhooks: WebhooksService;
  liveTokens: LiveTokenService;
}

export function projectServices({ stores, config, clock, resolve, webhookSecrets }: ServiceInputs): ProjectServices {
  const auth = new AuthService(stores.projects, config.auth.cacheTtlMs);
  return {
    auth,
    projects: new ProjectsService(stores.projects),
    apiKeys: new ApiKeysService(stores.apiKeys, auth, { maxPerProject: config.auth.maxKeysPerProject }),
    settings: new SettingsService(stores.settings),
    webhooks: new WebhooksService(stores.webhooks, stores.deliveryLog, webhookSecrets, clock, {
      allowPrivate: config.webhooks.allowPrivate,
      maxPerProject: config.webhooks.maxPerProject,
      resolve,
    }),
    liveTokens: new LiveTokenService(stores.instanceSecrets, { ttlSeconds: config.live.tokenTtlSeconds, secret: config.live.tokenSecret }, clock),
  };
}
