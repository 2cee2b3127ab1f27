import { EnvSchema } from './config-variables.js';
import type { StorageOptions } from './database/db.js';

/**
 * The only reader of `process.env` (docs/configuration.md).
 * Every variable is parsed once, typed and grouped by concern; a bad value throws a
 * ConfigError naming the variable, and `main.ts` turns that into a clean exit. The variables
 * themselves, with their defaults and bounds, are declared in config-variables.ts.
 */

export interface Config {
  /** `trustProxy`: false, a hop count, or the trusted proxies' addresses and ranges (TRUST_PROXY). */
  http: { port: number; host: string; trustProxy: false | number | string[] };
  storage:
    | { kind: 'pglite'; dataDir: string; lockStaleMs: number; cacheMb: number }
    | { kind: 'postgres'; url: string; poolSize: number; dataDir: string };
  redisUrl: string | undefined;
  log: { level: string };
  rateLimit: {
    /** false: no limits and no rate-limit headers (benchmarks, or limits enforced in front of tenure). */
    enabled: boolean;
    perKey: number;
    perIp: number;
    burst: number;
    /** Platform callbacks per endpoint (a merchant account, a project's bot) per minute. */
    callbacks: number;
    /** null: suspension switched off. */
    suspension: { threshold: number; windowSec: number; durationSec: number } | null;
  };
  redisKeyPrefix: string;
  webhooks: {
    allowPrivate: boolean;
    maxPerProject: number;
    /** Run the delivery worker and expiry sweeper inside the server process. */
    worker: boolean;
    /** Attempts in flight per process, and per endpoint per process. */
    concurrency: number;
    endpointConcurrency: number;
    /** How long one attempt may take before it counts as timed out. */
    timeoutMs: number;
    leaseMs: number;
  };
  auth: {
    cacheTtlMs: number;
    /** Active (not revoked) keys per project; the API refuses one more (the CLI, the operator's way back in, does not). */
    maxKeysPerProject: number;
  };
  /** Create a demo project and print its key on the first start of an empty embedded database. */
  demoProject: boolean;
  ops: { metricsToken: string | null; shutdownTimeoutMs: number; workerMetricsPort: number | null };
  live: {
    /** Connections per project, cluster-wide with Redis. */
    maxConnectionsPerProject: number;
    tokenTtlSeconds: number;
    /** Signs live-update tokens; unset: a random secret kept in `instance_secrets`. */
    tokenSecret: string | undefined;
    /** Client actions (subscribe, unsubscribe, ping) per connection per minute. */
    actionsPerMinute: number;
    /** Connections a client address (an IPv6 /64) may hold open before they authenticate, on this node. */
    maxPendingPerAddress: number;
    /** How far back a subscribe with `after` can resume. */
    eventRetentionMs: number;
  };
  /** How long history is kept: events, deliveries and attempts, handled Telegram updates. */
  retention: { historyMs: number };
  access: {
    /** REST root without version, as @discordjs/rest's `api` option. */
    discordApiUrl: string;
    /** As grammY's `client.apiRoot`. */
    telegramApiUrl: string;
    /** The raw TENURE_ENCRYPTION_KEY (parsed and checked by the secret box); undefined when unset. */
    encryptionKey: string | undefined;
    /** Drift repair: how often each bot's targets are compared with the platform. */
    reconcileMs: number;
    /** Platform calls in flight per bot (the library still queues them per rate-limit bucket). */
    concurrency: number;
    /** How long a worker's lease on a bot lasts unrenewed: how soon another worker takes over a dead one's bots. */
    leaseMs: number;
    /** Requests per second the REST client lets out per bot: Discord's global limit for the bot (50 unless Discord raised it). */
    discordGlobalPerSecond: number;
    /** A gateway connection per Discord bot held (its holder holds every connected bot), to hear members join. */
    discordGateway: boolean;
    telegram: {
      /** `single_use`: a link for one join (`member_limit` 1); `join_request`: a link whose requests the bot approves for members with access. */
      inviteMode: 'single_use' | 'join_request';
      /** How long an invite link lasts; an unused one is replaced by drift repair once it has expired. */
      inviteTtlMs: number;
      /** How the bot receives updates: `getUpdates` in the worker holding it, or Telegram posting to tenure. */
      updates: 'polling' | 'webhook';
      /** The public base URL Telegram posts to in webhook mode; undefined otherwise. */
      webhookUrl: string | undefined;
      /** Calls per second per bot, overall and in one chat. */
      perSecond: number;
      chatPerSecond: number;
    };
  };
  payments: {
    /** TENURE_STRIPE_API_URL as stripe-node's `host`, `port` and `protocol` options. */
    stripe: StripeEndpoint;
    /** Access kept past the paid-through date while a subscription is past_due. */
    gracePeriodMs: number;
    /** How often each account's recent events are listed from Stripe and applied (reconciliation). */
    reconcileMs: number;
  };
  frontDesk: {
    /** TENURE_PUBLIC_URL without a trailing slash: the start of every pay and portal link. */
    publicUrl: string;
    /** TENURE_MESSAGE_LEASE_SECONDS: how long a claimed member message stays its worker's. */
    messageLeaseMs: number;
  };
}

/** Where stripe-node sends its requests. */
export interface StripeEndpoint {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

/** `https://api.stripe.com` → `{host: 'api.stripe.com', port: 443, protocol: 'https'}`. */
export function stripeEndpointOf(url: string): StripeEndpoint {
  const u = new URL(url);
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port ? Number(u.port) : protocol === 'http' ? 80 : 443, protocol };
}

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

/** Parses an environment (default `process.env`) into a Config, or throws ConfigError. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as a shell `VAR= npm start` intends.
  const present = Object.fromEntries(
    Object.keys(EnvSchema.shape).flatMap((k) => (env[k] ? [[k, env[k]]] : [])),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    // URLs may carry credentials and secrets are secrets: name the variable, never echo its value.
    const shown = /(_URL|_SECRET|_TOKEN|ENCRYPTION_KEY)$/.test(variable) ? '' : ` (got ${JSON.stringify(present[variable] ?? null)})`;
    throw new ConfigError(variable, `${issue.message}${shown}`);
  }
  const e = parsed.data;
  if (e.TENURE_WEBHOOK_LEASE_SECONDS * 2 < e.TENURE_WEBHOOK_TIMEOUT_SECONDS * 3) {
    throw new ConfigError(
      'TENURE_WEBHOOK_LEASE_SECONDS',
      `must be at least 1.5 × TENURE_WEBHOOK_TIMEOUT_SECONDS (${e.TENURE_WEBHOOK_TIMEOUT_SECONDS}): a claimed delivery's lease must outlast its attempt (got ${e.TENURE_WEBHOOK_LEASE_SECONDS})`,
    );
  }
  if (e.TENURE_HISTORY_RETENTION < e.TENURE_EVENT_RETENTION) {
    throw new ConfigError(
      'TENURE_HISTORY_RETENTION',
      'must be at least TENURE_EVENT_RETENTION: live-update clients resume from events that must still be there',
    );
  }
  if (e.TENURE_TELEGRAM_UPDATES === 'webhook' && !e.TENURE_TELEGRAM_WEBHOOK_URL) {
    throw new ConfigError(
      'TENURE_TELEGRAM_WEBHOOK_URL',
      "must be set when TENURE_TELEGRAM_UPDATES is webhook: the public base URL Telegram posts the bots' updates to",
    );
  }
  return {
    http: { port: e.PORT, host: e.HOST, trustProxy: e.TRUST_PROXY },
    storage: e.DATABASE_URL
      ? { kind: 'postgres', url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, dataDir: e.DATA_DIR }
      : { kind: 'pglite', dataDir: e.DATA_DIR, lockStaleMs: e.TENURE_DATA_DIR_LOCK_STALE_SECONDS * 1000, cacheMb: e.TENURE_EMBEDDED_CACHE_MB },
    redisUrl: e.REDIS_URL,
    log: { level: e.LOG_LEVEL },
    rateLimit: {
      enabled: e.TENURE_RATE_LIMITS,
      perKey: e.TENURE_RATE_LIMIT_KEY,
      perIp: e.TENURE_RATE_LIMIT_IP,
      burst: e.TENURE_RATE_LIMIT_BURST,
      callbacks: e.TENURE_RATE_LIMIT_CALLBACKS,
      suspension: e.TENURE_SUSPENSION
        ? {
            threshold: e.TENURE_SUSPENSION_THRESHOLD,
            windowSec: e.TENURE_SUSPENSION_WINDOW_SECONDS,
            durationSec: e.TENURE_SUSPENSION_SECONDS,
          }
        : null,
    },
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    webhooks: {
      allowPrivate: e.TENURE_WEBHOOK_ALLOW_PRIVATE,
      maxPerProject: e.TENURE_WEBHOOK_MAX_PER_PROJECT,
      worker: e.TENURE_WORKER,
      concurrency: e.TENURE_WEBHOOK_CONCURRENCY,
      endpointConcurrency: e.TENURE_WEBHOOK_ENDPOINT_CONCURRENCY,
      timeoutMs: e.TENURE_WEBHOOK_TIMEOUT_SECONDS * 1000,
      leaseMs: e.TENURE_WEBHOOK_LEASE_SECONDS * 1000,
    },
    auth: { cacheTtlMs: e.TENURE_AUTH_CACHE_TTL_MS, maxKeysPerProject: e.TENURE_MAX_KEYS_PER_PROJECT },
    demoProject: e.TENURE_DEMO_PROJECT,
    ops: {
      metricsToken: e.TENURE_METRICS_TOKEN ?? null,
      shutdownTimeoutMs: e.TENURE_SHUTDOWN_TIMEOUT_MS,
      workerMetricsPort: e.TENURE_WORKER_METRICS_PORT || null,
    },
    live: {
      maxConnectionsPerProject: e.TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT,
      tokenTtlSeconds: e.TENURE_LIVE_TOKEN_TTL_SECONDS,
      tokenSecret: e.TENURE_LIVE_TOKEN_SECRET,
      actionsPerMinute: e.TENURE_LIVE_ACTIONS_PER_MINUTE,
      maxPendingPerAddress: e.TENURE_LIVE_MAX_PENDING_PER_IP,
      eventRetentionMs: e.TENURE_EVENT_RETENTION,
    },
    retention: { historyMs: e.TENURE_HISTORY_RETENTION },
    access: {
      discordApiUrl: e.TENURE_DISCORD_API_URL.replace(/\/+$/, ''),
      telegramApiUrl: e.TENURE_TELEGRAM_API_URL.replace(/\/+$/, ''),
      encryptionKey: e.TENURE_ENCRYPTION_KEY,
      reconcileMs: e.TENURE_ACCESS_RECONCILE_SECONDS * 1000,
      concurrency: e.TENURE_ACCESS_CONCURRENCY,
      leaseMs: e.TENURE_ACCESS_LEASE_SECONDS * 1000,
      discordGlobalPerSecond: e.TENURE_DISCORD_GLOBAL_PER_SECOND,
      discordGateway: e.TENURE_DISCORD_GATEWAY,
      telegram: {
        inviteMode: e.TENURE_TELEGRAM_INVITE_MODE,
        inviteTtlMs: e.TENURE_TELEGRAM_INVITE_TTL_SECONDS * 1000,
        updates: e.TENURE_TELEGRAM_UPDATES,
        webhookUrl: e.TENURE_TELEGRAM_WEBHOOK_URL?.replace(/\/+$/, ''),
        perSecond: e.TENURE_TELEGRAM_PER_SECOND,
        chatPerSecond: e.TENURE_TELEGRAM_CHAT_PER_SECOND,
      },
    },
    payments: {
      stripe: stripeEndpointOf(e.TENURE_STRIPE_API_URL),
      gracePeriodMs: e.TENURE_PAYMENTS_GRACE_PERIOD,
      reconcileMs: e.TENURE_PAYMENTS_RECONCILE_SECONDS * 1000,
    },
    frontDesk: {
      publicUrl: (e.TENURE_PUBLIC_URL ?? defaultPublicUrl(e.HOST, e.PORT)).replace(/\/+$/, ''),
      messageLeaseMs: e.TENURE_MESSAGE_LEASE_SECONDS * 1000,
    },
  };
}

/**
 * Where members reach tenure when TENURE_PUBLIC_URL is not set: the address it listens on, with
 * a listen-on-every-interface address (0.0.0.0, ::) read as this machine, which a browser can open.
 */
export function defaultPublicUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Where the configured database lives, as `openDatabase` takes it. */
export function storageOf(config: Config): StorageOptions {
  return config.storage.kind === 'postgres'
    ? { kind: 'postgres', url: config.storage.url, poolSize: config.storage.poolSize }
    : { kind: 'pglite', dataDir: config.storage.dataDir, lockStaleMs: config.storage.lockStaleMs, cacheMb: config.storage.cacheMb };
}

/**
 * The hosted product's API key `import botsubscription` reads from (docs/moving-in.md). An
 * environment variable, not a flag, so that it stays out of shell history and process lists; not
 * part of Config, since only that command needs it.
 */
export function botSubscriptionApiKey(env: NodeJS.ProcessEnv = process.env): string | null {
  const key = env.BOTSUBSCRIPTION_API_KEY?.trim();
  return key ? key : null;
}
