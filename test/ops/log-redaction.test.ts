import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Container } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, type Database } from '../../src/database/db.js';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/worker-runtime.js';
import { failEventInserts } from '../support/api.js';
import { appOn, createTestDatabase, future, userId, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { until } from './ops-support.js';

/**
 * No key, webhook secret, token or Authorization value ever reaches a log line. The real app and
 * the real delivery worker log at `trace` (everything) into a captured pino destination while
 * they are driven through every path that handles a credential: successes, 401s, 404s, 422s, a
 * 500 from inside the database, webhook create and rotate, live-token minting, metrics with and
 * without their token, a delivery the receiver refuses, and finally the database going away
 * mid-request (errors then carry the driver's own messages).
 */

const lines: string[] = [];
const capture = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});

const metricsToken = `metrics-${randomBytes(12).toString('hex')}`;
/** Every credential value the test sends or receives; none may appear in any log line. */
const secrets: string[] = [metricsToken];

let database: Database;
let app: FastifyInstance;
let runtime: WorkerRuntime;
let node: { app: FastifyInstance; container: Container; close(): Promise<void> };
let receiver: Receiver;
let projectId: string;
let key: string;

beforeAll(async () => {
  const config = loadConfig({
    TENURE_RATE_LIMIT_KEY: '1000000',
    TENURE_RATE_LIMIT_IP: '1000000',
    TENURE_RATE_LIMIT_BURST: '1000000',
    TENURE_WEBHOOK_ALLOW_PRIVATE: 'true',
    // The key stays in the auth cache when the database goes away at the end.
    TENURE_AUTH_CACHE_TTL_MS: '600000',
    TENURE_METRICS_TOKEN: metricsToken,
  });
  const logger = createLogger('trace', capture);
  database = await openDatabase((await createTestDatabase()).storage);
  node = await appOn(database, config, logger);
  ({ app } = node);
  const { services } = node.container;
  const project = await services.projects.createProject('redaction');
  if (!project.ok) throw project.error;
  projectId = project.value.id;
  const created = await services.projects.createKey(projectId, 'redaction', 'test');
  if (!created.ok) throw created.error;
  key = created.value.key;
  secrets.push(key);
  receiver = await startReceiver(() => ({ status: 401, body: 'who are you?' }));
  runtime = await startWorkerRuntime(node.container, { stopGraceMs: 0 });
});

afterAll(async () => {
  await runtime?.stop();
  await node?.close();
  await database?.close().catch(() => undefined);
  await receiver?.close();
});

const call = (o: InjectOptions & { auth?: string | null }) => {
  const { auth, ...rest } = o;
  const authorization = auth === undefined ? `Bearer ${key}` : auth;
  return app.inject({ ...rest, headers: { ...(authorization === null ? {} : { authorization }), ...o.headers } });
};

describe('logs never carry credentials', () => {
  it('drives every credential-bearing path', async () => {
    const base = `/v2/projects/${projectId}`;
    const user = userId();
    expect((await call({ method: 'POST', url: `${base}/memberships`, payload: { user_id: user, end_date: future().iso } })).statusCode).toBe(201);
    expect((await call({ method: 'PATCH', url: `${base}/memberships/${user}/extend`, payload: { extend: future(60).ms } })).statusCode).toBe(200);
    expect((await call({ method: 'PATCH', url: `${base}/memberships/${userId()}/extend`, payload: { extend: future().iso } })).statusCode).toBe(404);
    expect((await call({ method: 'PATCH', url: `${base}/memberships/extend`, payload: { extend: 'soon' } })).statusCode).toBe(422);

    const wrongKey = `tk_live_${randomBytes(32).toString('base64url')}`;
    const basic = `Basic ${Buffer.from(`admin:${randomBytes(8).toString('hex')}`).toString('base64')}`;
    const cookie = `session=${randomBytes(16).toString('hex')}`;
    secrets.push(wrongKey, basic, cookie);
    expect((await call({ method: 'GET', url: `${base}/memberships`, auth: `Bearer ${wrongKey}` })).statusCode).toBe(401);
    expect((await call({ method: 'GET', url: `${base}/memberships`, auth: basic, headers: { cookie } })).statusCode).toBe(401);
    expect((await call({ method: 'GET', url: `${base}/memberships?api_key=${encodeURIComponent(wrongKey)}`, auth: null })).statusCode).toBe(401);

    const hook = await call({ method: 'POST', url: `${base}/integrations/webhooks`, payload: { url: `${receiver.url}/hook` } });
    expect(hook.statusCode, hook.body).toBe(200);
    const { id: webhookId, secret } = hook.json().data as { id: string; secret: string };
    secrets.push(secret);
    const rotated = await call({ method: 'POST', url: `${base}/integrations/webhooks/${webhookId}/rotate-secret` });
    expect(rotated.statusCode, rotated.body).toBe(200);
    secrets.push(...(JSON.stringify(rotated.json().data).match(/[0-9a-f]{64}/g) ?? []));
    expect((await call({ method: 'POST', url: `${base}/integrations/webhooks/${webhookId}/test` })).statusCode).toBe(202);

    const minted = await call({ method: 'POST', url: `${base}/integrations/live-updates/tokens`, payload: {} });
    expect(minted.statusCode, minted.body).toBe(200);
    secrets.push(minted.json().data.token as string);

    expect((await call({ method: 'GET', url: '/metrics', auth: `Bearer ${metricsToken}x` })).statusCode).toBe(401);
    expect((await call({ method: 'GET', url: '/metrics', auth: `Bearer ${metricsToken}` })).statusCode).toBe(200);
    expect((await call({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    // The test event's attempt, which the receiver refuses (401): the worker logs and records it
    // (recording writes an event too, so this comes before event inserts are made to fail).
    await until(() => lines.some((l) => l.includes('"msg":"webhook attempt"')), 'the webhook attempt');

    // A failure inside the database: the 500 path logs the error with its cause.
    const restore = await failEventInserts({ database } as Harness, projectId);
    expect((await call({ method: 'POST', url: `${base}/memberships`, payload: { user_id: userId(), end_date: future().iso } })).statusCode).toBe(500);
    await restore();

    // The database goes away: a rotation generates a secret it cannot store, and the errors logged
    // carry the driver's messages. The new secret is never returned, so look for any 64-hex value.
    await database.close();
    const down = await call({ method: 'POST', url: `${base}/integrations/webhooks/${webhookId}/rotate-secret` });
    expect(down.statusCode, down.body).toBeGreaterThanOrEqual(500);
    expect((await call({ method: 'GET', url: `${base}/memberships`, auth: `Bearer ${wrongKey}` })).statusCode).toBeGreaterThanOrEqual(401);
    await runtime.stop();
    await app.close();
  });

  it('wrote structured logs of those paths, failures included', () => {
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const completed = entries.filter((e) => e.msg === 'request completed').map((e) => (e.res as { statusCode: number }).statusCode);
    expect(completed).toEqual(expect.arrayContaining([200, 201, 202, 401, 404, 422, 500]));
    // One line a request at info (src/http/request-log.ts): the request, its id, status and time;
    // its arrival is logged at debug only (this logger is at trace).
    expect(new Set(entries.filter((e) => e.msg === 'incoming request').map((e) => e.level))).toStrictEqual(new Set([20]));
    const line = entries.find((e) => e.msg === 'request completed' && (e.req as { method: string }).method === 'POST')!;
    expect(line).toMatchObject({ level: 30, request_id: expect.any(String), req: { method: 'POST', url: expect.stringMatching(/^\/v2\//) } });
    expect(typeof line.responseTime).toBe('number');
    // Probes log at their route's level (warnings only), whatever the server's: no line for each poll.
    const probeLines = entries.filter((e) => /^\/(healthz|readyz|metrics)/.test((e.req as { url?: string } | undefined)?.url ?? ''));
    expect(probeLines.filter((e) => (e.level as number) < 40)).toStrictEqual([]);
    expect(entries.some((e) => e.msg === 'request failed' && e.err)).toBe(true);
    // A request's own lines (request.log, made on first use: RequestLogger) carry its id.
    const failedIds = new Set(
      entries.filter((e) => e.msg === 'request completed' && (e.res as { statusCode: number }).statusCode >= 500).map((e) => e.request_id),
    );
    const own = entries.filter((e) => e.msg === 'request failed');
    expect(own.length).toBeGreaterThan(0);
    for (const e of own) expect(failedIds).toContain(e.request_id);
    expect(entries.some((e) => typeof e.msg === 'string' && e.msg.includes('webhook attempt'))).toBe(true);
  });

  it('contains none of the keys, secrets, tokens or Authorization values', () => {
    const all = lines.join('\n');
    expect(secrets.length).toBeGreaterThanOrEqual(8);
    for (const secret of secrets) {
      const line = lines.find((l) => l.includes(secret));
      expect(line, `a log line carries a credential:\n${line}`).toBeUndefined();
    }
    // Shapes rather than values: no key prefix, no bearer or basic credentials, no 64-hex value
    // (webhook secrets, and key hashes a failed query could carry in its parameters).
    for (const shape of [/tk_live_/, /Bearer /i, /Basic [A-Za-z0-9+/=]{8,}/, /\b[0-9a-f]{64}\b/]) {
      const line = lines.find((l) => shape.test(l));
      expect(line, `a log line matches ${shape}:\n${line}`).toBeUndefined();
    }
    expect(all.length).toBeGreaterThan(0);
  });
});
