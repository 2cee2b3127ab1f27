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
    },
    suspension: r.suspension,
  };
}

/**
 * The limiter the config asks for: in memory without REDIS_URL, else Redis shared by every node.
 * The Redis client never queues commands while disconnected and gives up on a command after
 * 500 ms, so an outage costs a request at most that, after which the insurance limiter answers
 * at once until the connection is back (it reconnects by itself).
 */
export function createRateLimiter(config: Config, logger: FastifyBaseLogger): RateLimiter {
  if (!config.rateLimit.enabled) return new NoRateLimiter(limitsOf(config));
  if (!config.redisUrl) return new FlexibleRateLimiter(limitsOf(config));
  const client = new Redis(config.redisUrl, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  return new FlexibleRateLimiter(limitsOf(config), {
    client,
    keyPrefix: config.redisKeyPrefix,
    onHealthChange: (healthy, err) =>
      healthy
        ? logger.info('Redis is reachable again; rate limits are shared across nodes again')
        : logger.warn({ err }, 'Redis is unreachable; rate limits fall back to this node\'s memory until it returns'),
  });
}
