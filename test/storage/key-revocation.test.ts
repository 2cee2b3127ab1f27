import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { createHarness, onPostgres, type Harness, type Tenant } from '../support/harness.js';
import { createKey } from '../support/keys.js';

/**
 * A revoked key reaches every node's key cache at once, through the database's notifications:
 * on PostgreSQL another node is another pool with its own LISTEN connection; on embedded storage
 * (one process holds the database) it is a second app in the process on the same database,
 * notified in process. Each node has its own cache either way.
 */

describe(`API key revocation on another node (${onPostgres ? 'LISTEN/NOTIFY' : 'in-process notification'})`, () => {
  let h: Harness;
  let node: Container;
  let other: FastifyInstance;
  beforeAll(async () => {
    // A cache TTL far beyond any test: a refused key can only have been dropped by the revocation.
    h = await createHarness({ env: { TENURE_AUTH_CACHE_TTL_MS: '3600000' } });
    const where = onPostgres ? { storage: h.storage } : { database: h.database };
    node = await createContainer({ config: h.config, logger: createLogger('silent'), ...where });
    await node.listen();
    other = await buildApp(node);
    await other.ready();
  });
  afterAll(async () => {
    await other.close();
    await node.close();
    await h.close();
  });

  const pathFor = (t: Tenant, id: string) => `${t.base}/integrations/api-keys/${id}`;
  const listWith = (app: FastifyInstance, t: Tenant, key: string) =>
    app.inject({ method: 'GET', url: `${t.base}/integrations/api-keys`, headers: { authorization: `Bearer ${key}` } });

  it('refuses a revoked key it had cached, long before its cache entry would expire', async () => {
    const t = await h.tenant();
    const second = await createKey(t);
    // The other node has the key in its cache (TTL one hour).
    expect((await listWith(other, t, second.key)).statusCode).toBe(200);
    const revoked = await t.request({ method: 'DELETE', url: pathFor(t, second.metadata.id) });
    expect(revoked.statusCode, revoked.body).toBe(200);
    // The notification arrives at commit; wait for it by asking (bounded by the test timeout).
    let res = await listWith(other, t, second.key);
    while (res.statusCode === 200) {
      await new Promise((r) => setTimeout(r, 10));
      res = await listWith(other, t, second.key);
    }
    expect(res.statusCode, res.body).toBe(401);
    // The key that did the revoking still works there.
    expect((await listWith(other, t, t.key)).statusCode).toBe(200);
  });
});
