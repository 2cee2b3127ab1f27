import { z } from 'zod';
import type { StorageOptions } from './store/db.js';

/**
 * The only reader of `process.env` (DESIGN.md, "Set-up and configuration").
 * Every variable is parsed once, typed and grouped by concern; a bad value throws a
 * ConfigError naming the variable, and `main.ts` turns that into a clean exit.
 */

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'], {
      error: 'must be one of true, false, 1, 0, on, off, yes, no',
    })
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'on', 'yes'].includes(v)));

const int = (fallback: number, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number' })
    .optional()
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().int().min(min).max(max));

const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\/.+/.test(v) && URL.canParse(v), {
    error: 'must be a postgres:// or postgresql:// URL',
  });

const redisUrl = z
  .string()
  .refine((v) => /^rediss?:\/\/.+/.test(v) && URL.canParse(v), {
    error: 'must be a redis:// or rediss:// URL',
  });

/** A duration such as `90s`, `15m`, `24h` or `7d`, in milliseconds. */
const duration = (fallback: string, minMs: number, maxMs: number) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      const m = /^(\d+)(s|m|h|d)$/.exec(v);
      const ms = m ? Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'] : NaN;
      if (!(ms >= minMs && ms <= maxMs)) {
        ctx.addIssue({ code: 'custom', message: `must be a duration like 90s, 15m, 24h or 7d, from ${minMs / 1000} s to ${maxMs / 86_400_000} days` });
        return z.NEVER;
      }
      return ms;
    });

const EnvSchema = z.object({
  PORT: int(3000, 0, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_SIZE: int(10, 1, 1000),
  REDIS_URL: redisUrl.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: flag(false),
  TENURE_RATE_LIMIT_KEY: int(100, 1, 1_000_000_000),
  TENURE_RATE_LIMIT_IP: int(300, 1, 1_000_000_000),
  TENURE_RATE_LIMIT_BURST: int(20, 1, 1_000_000_000),
  TENURE_RATE_LIMITS: flag(true),
  TENURE_SUSPENSION: flag(true),
  TENURE_SUSPENSION_THRESHOLD: int(10, 1, 1_000_000),
  TENURE_SUSPENSION_WINDOW_SECONDS: int(600, 1, 86_400),
  TENURE_SUSPENSION_SECONDS: int(900, 1, 86_400),
  REDIS_KEY_PREFIX: z.string().max(100).default('tenure:'),
  TENURE_WEBHOOK_ALLOW_PRIVATE: flag(false),
  // Webhook delivery (docs/webhooks.md). The lease must outlast an attempt's 10 s timeout.
  TENURE_WEBHOOK_MAX_PER_PROJECT: int(20, 1, 10_000),
  TENURE_WORKER: flag(true),
  TENURE_WEBHOOK_CONCURRENCY: int(64, 1, 10_000),
  TENURE_WEBHOOK_ENDPOINT_CONCURRENCY: int(8, 1, 1_000),
  TENURE_WEBHOOK_LEASE_SECONDS: int(60, 15, 3_600),
  TENURE_AUTH_CACHE_TTL_MS: int(5000, 0, 3_600_000),
  TENURE_DEMO_PROJECT: flag(true),
  // Operations (docs/operations.md): an optional bearer token for /metrics, and how long a
  // shutdown waits for requests and webhook attempts in flight.
  TENURE_METRICS_TOKEN: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
  TENURE_SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 600_000),
  // `npx tenure worker` has no HTTP server; with this set it serves /metrics on HOST:this port.
  TENURE_WORKER_METRICS_PORT: int(0, 0, 65535),
  // Live updates (docs/live-updates.md).
  TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT: int(100, 1, 1_000_000),
  TENURE_LIVE_TOKEN_TTL_SECONDS: int(900, 30, 86_400),
  TENURE_LIVE_TOKEN_SECRET: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
  TENURE_LIVE_ACTIONS_PER_MINUTE: int(120, 1, 1_000_000),
  TENURE_EVENT_RETENTION: duration('24h', 60_000, 90 * 86_400_000),
});

export interface Config {
  http: { port: number; host: string; trustProxy: boolean };
  storage:
    | { kind: 'pglite'; dataDir: string }
    | { kind: 'postgres'; url: string; poolSize: number; dataDir: string };
  redisUrl: string | undefined;
  log: { level: string };
  rateLimit: {
    /** false: no limits and no rate-limit headers (benchmarks, or limits enforced in front of tenure). */
    enabled: boolean;
    perKey: number;
    perIp: number;
    burst: number;
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
    leaseMs: number;
  };
  auth: { cacheTtlMs: number };
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
    /** How far back a subscribe with `after` can resume. */
    eventRetentionMs: number;
  };
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
    const shown = /_(URL|SECRET|TOKEN)$/.test(variable) ? '' : ` (got ${JSON.stringify(present[variable] ?? null)})`;
    throw new ConfigError(variable, `${issue.message}${shown}`);
  }
  const e = parsed.data;
  return {
    http: { port: e.PORT, host: e.HOST, trustProxy: e.TRUST_PROXY },
    storage: e.DATABASE_URL
      ? { kind: 'postgres', url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, dataDir: e.DATA_DIR }
      : { kind: 'pglite', dataDir: e.DATA_DIR },
    redisUrl: e.REDIS_URL,
    log: { level: e.LOG_LEVEL },
    rateLimit: {
      enabled: e.TENURE_RATE_LIMITS,
      perKey: e.TENURE_RATE_LIMIT_KEY,
      perIp: e.TENURE_RATE_LIMIT_IP,
      burst: e.TENURE_RATE_LIMIT_BURST,
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
      leaseMs: e.TENURE_WEBHOOK_LEASE_SECONDS * 1000,
    },
    auth: { cacheTtlMs: e.TENURE_AUTH_CACHE_TTL_MS },
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
      eventRetentionMs: e.TENURE_EVENT_RETENTION,
    },
  };
}

/** Where the configured database lives, as `openDatabase` takes it. */
export function storageOf(config: Config): StorageOptions {
  return config.storage.kind === 'postgres'
    ? { kind: 'postgres', url: config.storage.url, poolSize: config.storage.poolSize }
    : { kind: 'pglite', dataDir: config.storage.dataDir };
}
