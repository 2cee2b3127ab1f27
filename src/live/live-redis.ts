import { createAdapter } from '@socket.io/redis-adapter';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Server } from 'socket.io';
import type { Container } from '../container.js';
import { MemoryConnectionCap, RedisConnectionCap, type ConnectionCap } from './connection-cap.js';

/**
 * What the live-updates endpoint shares between nodes: with REDIS_URL, the Socket.IO Redis adapter
 * (an emit reaches every node's sockets) and the per-project connection cap in Redis; without, a
 * cap in this process's memory.
 */
export interface LiveSharing {
  cap: ConnectionCap;
  /** The Redis clients opened for it (none without REDIS_URL), to disconnect on close. */
  redisClients: Redis[];
}

/** Sets up `io`'s adapter and the connection cap for the container's configuration. */
export function shareLiveUpdates(io: Server, c: Container, logger: Logger): LiveSharing {
  const { config } = c;
  const redisClients: Redis[] = [];
  let cap: ConnectionCap;
  if (config.redisUrl) {
    const retryStrategy = (n: number) => Math.min(n * 200, 2_000);
    // The adapter's publishes are promises nobody awaits: they must never reject (an unhandled
    // rejection stops the process), so while Redis is away they wait in the queue, unbounded in
    // time, and go out on reconnection (late, never lost).
    const publisher = new Redis(config.redisUrl, { connectTimeout: 2_000, retryStrategy, maxRetriesPerRequest: null });
    const subscriber = publisher.duplicate();
    // The cap's own client fails fast instead: a handshake must not wait for an absent Redis.
    const capClient = new Redis(config.redisUrl, {
      connectTimeout: 2_000,
      retryStrategy,
      commandTimeout: 1_000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    redisClients.push(publisher, subscriber, capClient);
    watchRedis(publisher, 'publisher', logger);
    watchRedis(subscriber, 'subscriber', logger);
    watchRedis(capClient, 'connection cap', logger);
    io.adapter(createAdapter(publisher, subscriber, { key: `${config.redisKeyPrefix}live` }));
    cap = new RedisConnectionCap(capClient, config.redisKeyPrefix, config.live.maxConnectionsPerProject, logger);
  } else {
    cap = new MemoryConnectionCap(config.live.maxConnectionsPerProject);
    if (c.database.kind === 'postgres') {
      logger.info('live updates without REDIS_URL: a client only gets events this node broadcasts; run several nodes with Redis');
    }
  }
  return { cap, redisClients };
}

/**
 * Listens for a live-updates Redis client's errors (an 'error' event nobody listens to ends the
 * process) and logs one warning when its connection is lost and one line when it is back. ioredis
 * reconnects by itself; it emits 'error' only for a socket that failed (not for a connection the
 * server closed, CLIENT KILL or a restart), then again at every failed attempt.
 */
function watchRedis(client: Redis, role: string, logger: Logger): void {
  let lost = false;
  const lose = (err?: Error) => {
    if (lost) return;
    lost = true;
    logger.warn({ ...(err ? { err } : {}), redis_client: role }, 'live updates: Redis connection lost; reconnecting');
  };
  client.on('error', (err: Error) => lose(err));
  // Emitted only when a reconnection follows: never for this process's own disconnect().
  client.on('reconnecting', () => lose());
  client.on('ready', () => {
    if (!lost) return;
    lost = false;
    logger.info({ redis_client: role }, 'live updates: Redis connection back');
  });
}
