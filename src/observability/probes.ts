import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { pendingMigrations, type Db } from '../database/db.js';

/**
 * The checks behind `GET /readyz` and `npx tenure doctor`: is the database reachable, are all
 * migrations in `drizzle/` applied, is Redis reachable. Each answers within a bound: a probe that
 * hangs would make a load balancer's health check hang with it.
 */

export interface CheckResult {
  name: 'database' | 'migrations' | 'redis';
  /** `degraded`: a soft dependency is failing; the node still serves every request without it. */
  status: 'ok' | 'failed' | 'degraded' | 'skipped';
  /** Plain words; never a URL, a password or a query parameter. */
  detail: string;
}

const PROBE_TIMEOUT_MS = 3_000;

/** Rejects after `ms` so a stuck connection attempt cannot hold a probe. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The error's code and first message line: enough to act on, without the query or its parameters. */
export function reasonOf(err: unknown): string {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  // Drizzle wraps driver errors; the cause says what actually went wrong.
  while (e?.cause && typeof e.message === 'string' && e.message.startsWith('Failed query')) e = e.cause as typeof e;
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(err);
  const code = typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code}: ` : '';
  return `${code}${message}`.slice(0, 200);
}

export async function checkDatabase(db: Db): Promise<CheckResult> {
  try {
    await within(db.execute(sql`SELECT 1`), PROBE_TIMEOUT_MS, 'the database');
    return { name: 'database', status: 'ok', detail: 'reachable' };
  } catch (err) {
    return { name: 'database', status: 'failed', detail: `unreachable (${reasonOf(err)})` };
  }
}

export async function checkMigrations(db: Db): Promise<CheckResult> {
  try {
    const pending = await within(pendingMigrations(db), PROBE_TIMEOUT_MS, 'the database');
    return pending.length === 0
      ? { name: 'migrations', status: 'ok', detail: 'all applied' }
      : { name: 'migrations', status: 'failed', detail: `${pending.length} pending: ${pending.join(', ')}` };
  } catch (err) {
    return { name: 'migrations', status: 'failed', detail: `could not be read (${reasonOf(err)})` };
  }
}

/**
 * A Redis client for probes only: it never retries a command, and a probe gives up after the
 * bound, so an unreachable Redis is reported promptly.
 */
export function probeRedisClient(url: string): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // Failures are reported by the probe (without a listener ioredis would print each to stderr);
  // the socket's own error says more than the "Connection is closed." a command then fails with.
  client.on('error', (err: Error) => lastRedisError.set(client, err));
  return client;
}

const lastRedisError = new WeakMap<Redis, Error>();

/**
 * Readiness separates what stops a node from serving (the database, its migrations) from what only
 * degrades it: without Redis, rate limits are counted in each node's memory and live updates reach
 * only the clients connected to the node that wrote them, but every request is still answered. A
 * Redis outage is shared by every node at once, so failing readiness on it would have a load
 * balancer remove the whole cluster while each node could serve.
 */
export function asSoftDependency(check: CheckResult): CheckResult {
  if (check.status !== 'failed') return check;
  return { ...check, status: 'degraded', detail: `${check.detail}; rate limits are counted in this node's memory meanwhile` };
}

export async function checkRedis(client: Redis | null): Promise<CheckResult> {
  if (!client) return { name: 'redis', status: 'skipped', detail: 'REDIS_URL not set: rate limits are kept in memory' };
  try {
    if (client.status === 'wait') await within(client.connect(), PROBE_TIMEOUT_MS, 'Redis');
    await within(client.ping(), PROBE_TIMEOUT_MS, 'Redis');
    lastRedisError.delete(client);
    return { name: 'redis', status: 'ok', detail: 'reachable' };
  } catch (err) {
    return { name: 'redis', status: 'failed', detail: `unreachable (${reasonOf(lastRedisError.get(client) ?? err)})` };
  }
}
