import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The per-project connection cap (TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT). In memory it counts
 * this node's connections; with Redis it counts the cluster's, as a sorted set per project whose
 * members are connection ids scored by a lease expiry. Each node renews its own connections'
 * leases, so connections of a node that died without closing them stop counting after a lease.
 * If Redis cannot answer, a node falls back to counting its own connections (fail open to a
 * per-node cap) rather than refusing everyone.
 */
export interface ConnectionCap {
  /** Counts `connectionId` against `projectId`; false when the project is at its cap. */
  acquire(projectId: string, connectionId: string): Promise<boolean>;
  release(projectId: string, connectionId: string): Promise<void>;
  close(): Promise<void>;
}

export class MemoryConnectionCap implements ConnectionCap {
  private readonly held = new Map<string, Set<string>>();

  constructor(private readonly max: number) {}

  acquire(projectId: string, connectionId: string): Promise<boolean> {
    const set = this.held.get(projectId) ?? new Set<string>();
    if (set.size >= this.max) return Promise.resolve(false);
    set.add(connectionId);
    this.held.set(projectId, set);
    return Promise.resolve(true);
  }

  release(projectId: string, connectionId: string): Promise<void> {
    const set = this.held.get(projectId);
    set?.delete(connectionId);
    if (set?.size === 0) this.held.delete(projectId);
    return Promise.resolve();
  }

  /** This node's connections, per project (what the Redis cap renews). */
  entries(): IterableIterator<[string, Set<string>]> {
    return this.held.entries();
  }

  close(): Promise<void> {
    this.held.clear();
    return Promise.resolve();
  }
}

/** A node's connections count until their lease runs out unless it renews them (every third of it). */
const LEASE_MS = 60_000;

// KEYS[1] the project's set; ARGV: now, lease end, max, member, key lifetime. Expired leases go
// first. The key itself outlives every lease in it, only to clean up after a whole cluster stopped.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export class RedisConnectionCap implements ConnectionCap {
  /** This node's own connections: renewed in Redis, and the fallback count when Redis fails. */
  private readonly local: MemoryConnectionCap;
  private readonly renewTimer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly max: number,
    private readonly logger: Logger,
    /** Tests shorten it. */
    private readonly leaseMs = LEASE_MS,
  ) {
    this.local = new MemoryConnectionCap(max);
    this.renewTimer = setInterval(() => void this.renew(), Math.max(10, Math.floor(leaseMs / 3)));
    this.renewTimer.unref();
  }

  private key = (projectId: string) => `${this.keyPrefix}live:connections:${projectId}`;

  async acquire(projectId: string, connectionId: string): Promise<boolean> {
    const now = Date.now();
    let granted: boolean;
    try {
      granted = (await this.redis.eval(ACQUIRE, 1, this.key(projectId), now, now + this.leaseMs, this.max, connectionId, 2 * this.leaseMs)) === 1;
    } catch (err) {
      this.logger.warn({ err }, 'Redis did not answer the live connection count; counting this node only');
      return this.local.acquire(projectId, connectionId);
    }
    if (granted && !(await this.local.acquire(projectId, connectionId))) {
      // Redis had room but this node already holds the whole cap (after a Redis outage).
      await this.redis.zrem(this.key(projectId), connectionId).catch(() => undefined);
      return false;
    }
    return granted;
  }

  async release(projectId: string, connectionId: string): Promise<void> {
    await this.local.release(projectId, connectionId);
    await this.redis.zrem(this.key(projectId), connectionId).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    const until = Date.now() + this.leaseMs;
    const pipeline = this.redis.pipeline();
    for (const [projectId, ids] of this.local.entries()) {
      const key = this.key(projectId);
      // GT: never shorten; a lease lost to an outage is simply re-added.
      pipeline.zadd(key, 'GT', ...[...ids].flatMap((id) => [until, id]));
      pipeline.pexpire(key, 2 * this.leaseMs);
    }
    if (pipeline.length === 0) return;
    await pipeline.exec().catch((err: unknown) => this.logger.warn({ err }, 'could not renew live connection leases in Redis'));
  }

  async close(): Promise<void> {
    clearInterval(this.renewTimer);
    await this.local.close();
  }
}
