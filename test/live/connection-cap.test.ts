import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnectionCap } from '../../src/live/connection-cap.js';
import { createLogger } from '../../src/logger.js';
import { freePort, startRedis, type RedisProcess } from '../support/processes.js';

/**
 * The cluster-wide connection cap on a real Redis of the test's own: several nodes (here, several
 * caps on one Redis) share one count per project; a node that dies stops counting once its
 * leases run out; an unreachable Redis leaves each node capping its own connections.
 */

let redis: RedisProcess;
const clients: Redis[] = [];
const caps: RedisConnectionCap[] = [];
const MAX = 2;
const LEASE_MS = 1_000;

beforeAll(async () => {
  redis = await startRedis(await freePort());
});
afterEach(async () => {
  await Promise.all(caps.splice(0).map((c) => c.close()));
  for (const c of clients.splice(0)) c.disconnect();
});
afterAll(() => redis.stop());

function node(): RedisConnectionCap {
  const client = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, retryStrategy: () => 100 });
  client.on('error', () => undefined);
  clients.push(client);
  const cap = new RedisConnectionCap(client, 'test:', MAX, createLogger('silent'), LEASE_MS);
  caps.push(cap);
  return cap;
}

async function ready(): Promise<void> {
  await Promise.all(clients.map((c) => (c.status === 'ready' ? undefined : new Promise((resolve) => c.once('ready', resolve)))));
}

describe('RedisConnectionCap', () => {
  it('counts every node’s connections against one cap per project, and a release frees a place', async () => {
    const [a, b] = [node(), node()];
    await ready();
    const project = randomUUID();
    expect(await a.acquire(project, 'a1')).toBe(true);
    expect(await b.acquire(project, 'b1')).toBe(true);
    expect(await a.acquire(project, 'a2')).toBe(false);
    expect(await b.acquire(project, 'b2')).toBe(false);
    // Other projects have their own count.
    expect(await b.acquire(randomUUID(), 'b3')).toBe(true);
    await a.release(project, 'a1');
    expect(await b.acquire(project, 'b2')).toBe(true);
  });

  it('keeps a live node’s connections counted past their first lease (it renews them)', async () => {
    const [a, b] = [node(), node()];
    await ready();
    const project = randomUUID();
    expect(await a.acquire(project, 'a1')).toBe(true);
    expect(await a.acquire(project, 'a2')).toBe(true);
    // Three leases later, the renewals have kept both places taken.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    expect(await b.acquire(project, 'b1')).toBe(false);
  });

  it('stops counting the connections of a node that died once their leases run out', async () => {
    const [dead, b] = [node(), node()];
    await ready();
    const project = randomUUID();
    expect(await dead.acquire(project, 'd1')).toBe(true);
    expect(await dead.acquire(project, 'd2')).toBe(true);
    await dead.close(); // no releases, no more renewals: as if the process was killed
    expect(await b.acquire(project, 'b1')).toBe(false);
    let admitted = false;
    for (let i = 0; i < 50 && !admitted; i++) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 3));
      admitted = await b.acquire(project, 'b1');
    }
    expect(admitted).toBe(true);
  });

  it('caps each node on its own while Redis cannot answer', async () => {
    const a = node();
    await ready();
    await redis.stop();
    try {
      const project = randomUUID();
      expect(await a.acquire(project, 'a1')).toBe(true);
      expect(await a.acquire(project, 'a2')).toBe(true);
      expect(await a.acquire(project, 'a3')).toBe(false);
      await a.release(project, 'a1');
      expect(await a.acquire(project, 'a3')).toBe(true);
    } finally {
      redis = await startRedis(redis.port);
    }
  });
});
