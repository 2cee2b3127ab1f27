import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The environment variables tenure reads, each with its parser, default and bounds (the table in
 * docs/configuration.md), and the value parsers they share. config.ts parses the environment with
 * EnvSchema once and maps the result into the typed Config; checks across variables are there.
 */

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'], {
      error: 'must be one of true, false, 1, 0, on, off, yes, no',
    })
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'on', 'yes'].includes(v)));

/**
 * TRUST_PROXY: which proxies in front of tenure are trusted to say who the client is. `false`
 * (default): nobody, the client is the socket's address. `true` (or `on`, `yes`): one hop, the
 * proxy tenure's socket talks to, so the client is the last `X-Forwarded-For` address, the one that
 * proxy saw. A number: that many hops. Otherwise a comma-separated list of proxy addresses and CIDR
 * ranges (or `loopback`, `linklocal`, `uniquelocal`), as Fastify's `trustProxy` takes them. The
 * client is never simply the leftmost address, which the client writes itself.
 */
const trustProxy = z
  .string()
  .optional()
  .transform((v, ctx): false | number | string[] => {
    if (v === undefined || ['false', '0', 'off', 'no'].includes(v)) return false;
    if (['true', 'on', 'yes'].includes(v)) return 1;
    if (/^\d+$/.test(v)) return Math.min(Number(v), 100);
    const entries = v.split(',').map((e) => e.trim());
    const valid = (e: string) => {
      if (['loopback', 'linklocal', 'uniquelocal'].includes(e)) return true;
      const [address, bits, extra] = e.split('/');
      if (extra !== undefined || !address || isIP(address) === 0) return false;
      return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128));
    };
    if (entries.every(valid)) return entries;
    ctx.addIssue({ code: 'custom', message: 'must be true, false, a hop count, or a comma-separated list of proxy addresses and CIDR ranges' });
    return z.NEVER;
  });

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

export const EnvSchema = z.object({
  PORT: int(3000, 0, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  // A data-directory lock whose holder stopped refreshing it (a killed process) is taken over after this.
  TENURE_DATA_DIR_LOCK_STALE_SECONDS: int(10, 2, 600),
  // The embedded database's page cache: resident from the start, so it is memory the process always holds.
  TENURE_EMBEDDED_CACHE_MB: int(16, 1, 1024),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_SIZE: int(10, 1, 1000),
  REDIS_URL: redisUrl.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: trustProxy,
  TENURE_RATE_LIMIT_KEY: int(100, 1, 1_000_000_000),
  TENURE_RATE_LIMIT_IP: int(300, 1, 1_000_000_000),
  TENURE_RATE_LIMIT_BURST: int(20, 1, 1_000_000_000),
  // Platform callbacks (Stripe events, Telegram updates) per endpoint per minute: sized for a
  // renewal run or a catch-up after an outage, not for an API client.
  TENURE_RATE_LIMIT_CALLBACKS: int(6_000, 1, 1_000_000_000),
  TENURE_RATE_LIMITS: flag(true),
  TENURE_SUSPENSION: flag(true),
  TENURE_SUSPENSION_THRESHOLD: int(10, 1, 1_000_000),
  TENURE_SUSPENSION_WINDOW_SECONDS: int(600, 1, 86_400),
  TENURE_SUSPENSION_SECONDS: int(900, 1, 86_400),
  REDIS_KEY_PREFIX: z.string().max(100).default('tenure:'),
  TENURE_WEBHOOK_ALLOW_PRIVATE: flag(false),
  // Webhook delivery (docs/webhooks.md). The lease must outlast an attempt: at least 1.5 × its timeout.
  TENURE_WEBHOOK_MAX_PER_PROJECT: int(20, 1, 10_000),
  TENURE_WORKER: flag(true),
  TENURE_WEBHOOK_CONCURRENCY: int(64, 1, 10_000),
  TENURE_WEBHOOK_ENDPOINT_CONCURRENCY: int(8, 1, 1_000),
  TENURE_WEBHOOK_TIMEOUT_SECONDS: int(10, 1, 60),
  TENURE_WEBHOOK_LEASE_SECONDS: int(60, 2, 3_600),
  TENURE_AUTH_CACHE_TTL_MS: int(5000, 0, 3_600_000),
  // Active API keys a project may have: each key has its own rate-limit budget (docs/api-keys-settings-users.md).
  TENURE_MAX_KEYS_PER_PROJECT: int(50, 1, 10_000),
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
  // Live-update connections one client address (an IPv6 /64) may hold open before they authenticate, per node.
  TENURE_LIVE_MAX_PENDING_PER_IP: int(20, 1, 1_000_000),
  TENURE_EVENT_RETENTION: duration('24h', 60_000, 90 * 86_400_000),
  // Events, webhook deliveries and attempts, handled Telegram updates: pruned past this age (docs/operations.md).
  // At least a day: Telegram redelivers an update for up to 24 h, and a handled one must still be known then.
  TENURE_HISTORY_RETENTION: duration('30d', 86_400_000, 3650 * 86_400_000),
  // Access on Discord and Telegram (docs/access.md).
  TENURE_DISCORD_API_URL: z.string().refine((v) => /^https?:\/\/.+/.test(v) && URL.canParse(v), { error: 'must be an http:// or https:// URL' }).default('https://discord.com/api'),
  TENURE_TELEGRAM_API_URL: z.string().refine((v) => /^https?:\/\/.+/.test(v) && URL.canParse(v), { error: 'must be an http:// or https:// URL' }).default('https://api.telegram.org'),
  // 32 bytes, base64 or 64 hex characters: seals bot tokens at rest. Unset on embedded storage: a
  // key generated on first start in DATA_DIR/encryption.key. Required to connect a bot on PostgreSQL.
  TENURE_ENCRYPTION_KEY: z.string().optional(),
  TENURE_ACCESS_RECONCILE_SECONDS: int(600, 5, 7 * 86_400),
  TENURE_ACCESS_CONCURRENCY: int(8, 1, 1_000),
  // A bot's lease (one worker process calls a bot at a time): a dead worker's bots are taken over after it.
  TENURE_ACCESS_LEASE_SECONDS: int(30, 3, 3_600),
  // Discord's global limit per bot is 50 requests/s; Discord raises it for some large bots on request.
  TENURE_DISCORD_GLOBAL_PER_SECOND: int(50, 1, 100_000),
  // A gateway connection per Discord bot held: a member who joins gets their role within seconds (docs/access-discord.md).
  TENURE_DISCORD_GATEWAY: flag(true),
  // Telegram (docs/access-telegram.md): how members get in, how the bot hears of joins, its pace.
  TENURE_TELEGRAM_INVITE_MODE: z.enum(['single_use', 'join_request'], { error: 'must be single_use or join_request' }).default('single_use'),
  TENURE_TELEGRAM_INVITE_TTL_SECONDS: int(86_400, 60, 30 * 86_400),
  TENURE_TELEGRAM_UPDATES: z.enum(['polling', 'webhook'], { error: 'must be polling or webhook' }).default('polling'),
  // The public https:// base URL Telegram posts updates to (…/telegram/updates/{project_id}); required for webhook.
  TENURE_TELEGRAM_WEBHOOK_URL: z.string().refine((v) => /^https?:\/\/.+/.test(v) && URL.canParse(v), { error: 'must be an http:// or https:// URL' }).optional(),
  // Telegram publishes no limits for these calls: the bot's pace overall and in one chat, both configurable.
  TENURE_TELEGRAM_PER_SECOND: int(25, 1, 10_000),
  TENURE_TELEGRAM_CHAT_PER_SECOND: int(5, 1, 10_000),
  // Payments (docs/payments.md): Stripe's API root, split into stripe-node's host, port and protocol.
  TENURE_STRIPE_API_URL: z
    .string()
    .refine((v) => /^https?:\/\/[^/?#]+\/?$/.test(v) && URL.canParse(v), { error: 'must be an http:// or https:// URL without a path' })
    .default('https://api.stripe.com'),
  // How long a member keeps access after a renewal fails (subscription past_due), before Stripe gives up.
  TENURE_PAYMENTS_GRACE_PERIOD: duration('3d', 0, 60 * 86_400_000),
  // How often each merchant account's recent Stripe events are listed and whatever the webhook missed applied.
  TENURE_PAYMENTS_RECONCILE_SECONDS: int(600, 10, 86_400),
  // The front desk (docs/front-desk.md): the address members reach tenure at; every link handed out starts with it.
  TENURE_PUBLIC_URL: z
    .string()
    .refine((v) => /^https?:\/\/[^?#]+$/.test(v) && URL.canParse(v), { error: 'must be an http:// or https:// URL without a query or fragment' })
    .optional(),
  // A member message claimed by a worker stays claimed this long; a worker that died sending it leaves it to another after it.
  TENURE_MESSAGE_LEASE_SECONDS: int(60, 10, 3_600),
});
