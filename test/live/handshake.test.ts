import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { io as connectSocket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/domain/clock.js';
import { LiveTokenService } from '../../src/live/live-tokens.js';
import { LIVE_PATH, startLiveUpdates } from '../../src/live/live-updates.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createContainer } from '../../src/container.js';
import { openDatabase } from '../../src/database/db.js';
import { InstanceSecretsStore } from '../../src/store/instance-secrets.store.js';
import { ProjectsStore } from '../../src/store/projects.store.js';
import { createTestDatabase, type Tenant } from '../support/harness.js';
import { unknownKey } from '../support/security.js';
import { createLiveHarness, LiveClient, type LiveHarness } from './live-harness.js';

/**
 * Who may connect: an API key of the project or a live-update token minted
 * for it, and nothing else. Every refusal is a `connect_error` whose message says what is wrong
 * and whose `data.error_code` names it, without echoing the credential.
 */

let lh: LiveHarness;
beforeAll(async () => {
  // A strict REST limit per key: the socket must not be subject to it (docs/live-updates.md, "Limits").
  lh = await createLiveHarness({ env: { TENURE_RATE_LIMIT_KEY: '2', TENURE_RATE_LIMIT_BURST: '2' }, keyCheckMs: 100 });
});
afterAll(() => lh.close());

const mint = async (t: Tenant, clock?: Clock) => {
  const tokens = clock
    ? new LiveTokenService(new InstanceSecretsStore(lh.h.database.db), { ttlSeconds: 900, secret: undefined }, clock)
    : lh.h.services.liveTokens;
  return (await tokens.mint({ projectId: t.projectId, keyId: t.keyId })).token;
};

async function expectRefused(auth: Record<string, unknown> | undefined, error_code: string, message: RegExp, secret?: string) {
  const c = lh.client(auth);
  const refusal = await c.refusal();
  expect(refusal, JSON.stringify(refusal)).toStrictEqual({ error_code, message: expect.stringMatching(message) });
  if (secret) expect(refusal.message).not.toContain(secret);
  expect(c.socket.connected).toBe(false);
  expect(c.received).toStrictEqual([]);
}

describe('accepted credentials', () => {
  it('connects with an API key of the project and says ready with a connection id', async () => {
    const t = await lh.tenant();
    const c = lh.client({ token: t.key, project_id: t.projectId });
    const id = await c.ready();
    expect(id).toMatch(/^\S{8,}$/);
    expect(c.messages()).toStrictEqual([{ type: 'ready', connection_id: id }]);
  });

  it('connects with a live-update token minted for the project', async () => {
    const t = await lh.tenant();
    const c = lh.client({ token: await mint(t), project_id: t.projectId });
    await c.ready();
    expect((await c.act({ action: 'ping' }, 'pong'))).toStrictEqual({ type: 'pong' });
  });

  it('connects over HTTP long-polling as well as WebSocket', async () => {
    const t = await lh.tenant();
    const c = lh.client({ token: t.key, project_id: t.projectId }, { transports: ['polling'] });
    await c.ready();
    expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });

  it('is not subject to the REST rate limits', async () => {
    const t = await lh.tenant();
    // This harness allows a key 2 REST requests a minute: five connections with it and their actions go through.
    const clients = await Promise.all(Array.from({ length: 5 }, () => lh.connect(t)));
    for (const c of clients) expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request({ method: 'GET', url: `${t.base}/memberships` })).statusCode);
    expect(statuses).toContain(429);
  });

  it('lets two token services on one database verify each other’s tokens (the stored signing key)', async () => {
    const t = await lh.tenant();
    const other = new LiveTokenService(new InstanceSecretsStore(lh.h.database.db), { ttlSeconds: 900, secret: undefined }, { now: () => new Date() });
    const token = (await other.mint({ projectId: t.projectId, keyId: t.keyId })).token;
    const c = lh.client({ token, project_id: t.projectId });
    await c.ready();
  });
});

describe('refusals', () => {
  it('refuses a handshake without auth', async () => {
    await expectRefused(undefined, 'UNAUTHORIZED', /^Missing token/);
  });

  it.each([
    ['an empty token', ''],
    ['a null token', null],
  ])('refuses %s', async (_what, token) => {
    const t = await lh.tenant();
    await expectRefused({ token, project_id: t.projectId }, 'UNAUTHORIZED', /^Missing token/);
  });

  it('refuses a token that is not a string', async () => {
    const t = await lh.tenant();
    await expectRefused({ token: 12345, project_id: t.projectId }, 'UNAUTHORIZED', /must be a string/);
  });

  it('refuses a handshake without project_id', async () => {
    const t = await lh.tenant();
    await expectRefused({ token: t.key }, 'VALIDATION_ERROR', /Missing project_id/, t.key);
  });

  it.each([
    ['garbage', () => 'garbage'],
    ['a bearer header instead of the key', (t: Tenant) => `Bearer ${t.key}`],
    ['a truncated key', (t: Tenant) => t.key.slice(0, 20)],
  ])('refuses %s as a malformed token', async (_what, token) => {
    const t = await lh.tenant();
    await expectRefused({ token: token(t), project_id: t.projectId }, 'UNAUTHORIZED', /^Malformed token/, t.key);
  });

  it('refuses a well-formed API key that does not exist', async () => {
    const t = await lh.tenant();
    const key = unknownKey();
    await expectRefused({ token: key, project_id: t.projectId }, 'UNAUTHORIZED', /Invalid or revoked API key/, key);
  });

  it('refuses a revoked API key', async () => {
    const t = await lh.tenant();
    const issued = await lh.h.services.projects.createKey(t.projectId, 'to revoke', 'test');
    if (!issued.ok) throw issued.error;
    await new ProjectsStore(lh.h.database.db).revokeKey(issued.value.metadata.id, 'test');
    await expectRefused({ token: issued.value.key, project_id: t.projectId }, 'UNAUTHORIZED', /Invalid or revoked API key/, issued.value.key);
  });

  it.each([
    ['another project', async () => (await lh.tenant()).projectId],
    ['a project that does not exist', () => Promise.resolve(randomUUID())],
    ['a project id that is not a UUID', () => Promise.resolve('not-a-project')],
  ])('refuses an API key for %s', async (_what, projectId) => {
    const t = await lh.tenant();
    await expectRefused({ token: t.key, project_id: await projectId() }, 'FORBIDDEN', /does not have access to this project/, t.key);
  });

  it.each([
    ['another project', async () => (await lh.tenant()).projectId],
    ['a project id that is not a UUID', () => Promise.resolve('not-a-project')],
  ])('refuses a live-update token for %s', async (_what, projectId) => {
    const t = await lh.tenant();
    await expectRefused({ token: await mint(t), project_id: await projectId() }, 'FORBIDDEN', /minted for another project/);
  });

  it('refuses an expired live-update token', async () => {
    const t = await lh.tenant();
    const token = await mint(t, { now: () => new Date(Date.now() - 16 * 60_000) });
    await expectRefused({ token, project_id: t.projectId }, 'UNAUTHORIZED', /expired; mint a new one/);
  });

  it('refuses a token signed with another key', async () => {
    const t = await lh.tenant();
    const forged = await new SignJWT({ key_id: t.keyId })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('tenure')
      .setAudience('tenure:live-updates')
      .setSubject(t.projectId)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    await expectRefused({ token: forged, project_id: t.projectId }, 'UNAUTHORIZED', /^Invalid live-update token$/);
  });

  it('refuses a token whose payload was altered, and an unsigned one', async () => {
    const t = await lh.tenant();
    const other = await lh.tenant();
    const [header, payload, signature] = (await mint(t)).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...claims, sub: other.projectId })).toString('base64url');
    await expectRefused({ token: `${header}.${altered}.${signature}`, project_id: other.projectId }, 'UNAUTHORIZED', /^Invalid live-update token$/);
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    await expectRefused({ token: `${none}.${payload}.x`, project_id: t.projectId }, 'UNAUTHORIZED', /^Invalid live-update token$/);
  });

  it('refuses a token minted with a key that was revoked since', async () => {
    const t = await lh.tenant();
    const issued = await lh.h.services.projects.createKey(t.projectId, 'minter', 'test');
    if (!issued.ok) throw issued.error;
    const token = (await lh.h.services.liveTokens.mint({ projectId: t.projectId, keyId: issued.value.metadata.id })).token;
    await new ProjectsStore(lh.h.database.db).revokeKey(issued.value.metadata.id, 'test');
    await expectRefused({ token, project_id: t.projectId }, 'UNAUTHORIZED', /has been revoked/);
  });

  it('refuses the default namespace: only /v2/live-updates exists', async () => {
    const t = await lh.tenant();
    const socket = connectSocket(lh.url, { path: LIVE_PATH, transports: ['websocket'], auth: { token: t.key, project_id: t.projectId }, reconnection: false, forceNew: true });
    try {
      const err = await new Promise<Error & { data?: { error_code?: string } }>((resolve) => socket.once('connect_error', resolve));
      expect({ message: err.message, code: err.data?.error_code }).toStrictEqual({ message: 'Connect to the /v2/live-updates namespace', code: 'NOT_FOUND' });
    } finally {
      socket.disconnect();
    }
  });
});

describe('revocation of an open connection', () => {
  it('closes connections of a key revoked after they opened, with a message, and only those', async () => {
    const t = await lh.tenant();
    const issued = await lh.h.services.projects.createKey(t.projectId, 'revoked while connected', 'test');
    if (!issued.ok) throw issued.error;
    const byKey = lh.client({ token: issued.value.key, project_id: t.projectId });
    const byToken = lh.client({ token: (await lh.h.services.liveTokens.mint({ projectId: t.projectId, keyId: issued.value.metadata.id })).token, project_id: t.projectId });
    const bystander = await lh.connect(t);
    await Promise.all([byKey.ready(), byToken.ready()]);
    await new ProjectsStore(lh.h.database.db).revokeKey(issued.value.metadata.id, 'test');
    for (const c of [byKey, byToken]) {
      await c.disconnected();
      expect(c.messages().at(-1)).toStrictEqual({ type: 'error', error_code: 'UNAUTHORIZED', message: 'The API key of this connection has been revoked' });
    }
    // The bystander (another key) is still served.
    expect(await bystander.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });
});

describe('failed handshakes per IP', () => {
  let strict: LiveHarness;
  const LIMIT = 3;
  beforeAll(async () => {
    strict = await createLiveHarness({ env: { TENURE_RATE_LIMIT_IP: String(LIMIT) } });
  });
  afterAll(() => strict.close());

  it(`refuses an address after ${LIMIT} failed handshakes a minute, before looking the credential up; successes never count`, async () => {
    const t = await strict.tenant();
    // Successful handshakes, more than the limit: none counts.
    for (let i = 0; i < LIMIT + 2; i++) await strict.connect(t);
    for (let i = 0; i < LIMIT; i++) {
      const refused = await strict.client({ token: unknownKey(), project_id: t.projectId }).refusal();
      expect(refused.error_code).toBe('UNAUTHORIZED');
    }
    // Now even the right key is refused from this address, until the minute is over.
    const blocked = await strict.client({ token: t.key, project_id: t.projectId }).refusal();
    expect(blocked).toStrictEqual({
      error_code: 'RATE_LIMIT_EXCEEDED',
      message: expect.stringMatching(/^Too many failed connection attempts\. Please retry after \d+ seconds\.$/),
    });
  });
});

describe('revocation through the API', () => {
  let slow: LiveHarness;
  beforeAll(async () => {
    // The periodic key check is far away: only the revocation's announcement can close in time.
    slow = await createLiveHarness({ keyCheckMs: 600_000 });
  });
  afterAll(() => slow.close());

  it('closes the key’s connections as soon as it is revoked, and refuses it from then on', async () => {
    const t = await slow.tenant();
    const issued = await slow.h.services.projects.createKey(t.projectId, 'revoked over REST', 'test');
    if (!issued.ok) throw issued.error;
    const c = slow.client({ token: issued.value.key, project_id: t.projectId });
    await c.ready();
    const res = await t.request({ method: 'DELETE', url: `${t.base}/integrations/api-keys/${issued.value.metadata.id}` });
    expect(res.statusCode, res.body).toBe(200);
    await c.disconnected();
    expect(c.messages().at(-1)).toMatchObject({ type: 'error', error_code: 'UNAUTHORIZED' });
    const again = await slow.client({ token: issued.value.key, project_id: t.projectId }).refusal();
    expect(again.error_code).toBe('UNAUTHORIZED');
  });
});

describe('an unreachable database', () => {
  it('refuses handshakes it cannot check with INTERNAL_ERROR, leaking nothing', async () => {
    // Taken away before the first handshake: any database will do, so the run's in-memory copy.
    const database = await openDatabase((await createTestDatabase()).storage);
    const container = await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database });
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const live = await startLiveUpdates(server, container, { pollMs: 60_000 });
    await database.close();
    const key = unknownKey();
    const c = new LiveClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { token: key, project_id: randomUUID() }, ['websocket']);
    try {
      expect(await c.refusal()).toStrictEqual({ error_code: 'INTERNAL_ERROR', message: 'The connection could not be checked; try again' });
    } finally {
      c.socket.disconnect();
      await live.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
