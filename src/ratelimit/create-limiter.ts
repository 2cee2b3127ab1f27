import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { FlexibleRateLimiter, NoRateLimiter, type LimitsConfig, type RateLimiter } from './rate-limiter.js';

export function limitsOf(config: Config): LimitsConfig {
  const r = config.rateLimit;
  return {
    policies: {
      key: { limit: r.perKey, windowSec: 60 },
      ip: { limit: r.perIp, windowSec: 60 },
      burst: { limit: r.burst, windowSec: 1 },
      callback: { limit: r.callbacks, windowSec: 60 },
    },
    suspension: r.suspension,
  };
}

/** How long the Redis client waits for a command: the most a Redis that stalls costs a request, once. */
const COMMAND_TIMEOUT_MS = 500;

/**
 * The limiter the config asks for: in memory without REDIS_URL, else Redis shared by every node.
 * The Redis client never queues commands while disconnected and gives up on a command after
 * COMMAND_TIMEOUT_MS; from the first failure or timeout, counts go to the node's memory at once,
 * without touching Redis, until a probe answers promptly (redis-counts.ts). It reconnects by itself.
 */
export function createRateLimiter(config: Config, logger: FastifyBaseLogger): RateLimiter {
  if (!config.rateLimit.enabled) return new NoRateLimiter(limitsOf(config));
  if (!config.redisUrl) return new FlexibleRateLimiter(limitsOf(config));
  const client = new Redis(config.redisUrl, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  return new FlexibleRateLimiter(limitsOf(config), {
    client,
    keyPrefix: config.redisKeyPrefix,
    timeoutMs: COMMAND_TIMEOUT_MS,
    onHealthChange: (healthy, err) =>
      healthy
        ? logger.info('Redis is reachable again; rate limits are shared across nodes again')
        : logger.warn({ err }, 'Redis is unreachable; rate limits fall back to this node\'s memory until it returns'),
  });
}
