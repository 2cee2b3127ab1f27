import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMembership, UUID } from '../support/api.js';
import { future, useHarness, userId, type Harness } from '../support/harness.js';
import { createHook, createWebhookHarness, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * GET /metrics through the real app: Prometheus text from the app's own registry, requests by
 * route pattern (never the raw URL), rate-limit rejections, delivery attempts by outcome counted
 * by the real worker, the delivery queue read from the database at scrape time, live
 * connections, process metrics, and the optional bearer token.
 */

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const inner = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const have = inner === '' ? [] : inner.split(/,(?=\w+=")/);
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(h: Harness, headers: Record<string, string> = {}): Promise<string> {
  const res = await h.app.inject({ method: 'GET', url: '/metrics', headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.body;
}

describe('GET /metrics', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness();
    receiver = await startReceiver((r) => (r.path.startsWith('/fail') ? { status: 500 } : { status: 204 }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });

  it('counts requests and their latency by method, route pattern and status; never by raw URL', async () => {
    const t = await w.tenant();
    const user = userId();
    await createMembership(t, { userId: user });
    const extend = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${user}/extend`, payload: { extend: future().iso } });
    expect(extend.statusCode, extend.body).toBe(200);
    await w.h.app.inject({ method: 'GET', url: `/no/such/${t.projectId}` });

    const text = await scrape(w.h);
    const route = '/v2/projects/:project_id/memberships/:user_id/extend';
    const labels = { method: 'PATCH', route, status_code: '200' };
    expect(sample(text, 'tenure_http_requests_total', labels), text).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tenure_http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tenure_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tenure_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(t.projectId);
    expect(text).not.toContain(user);
  });

  it('reads the delivery queue at scrape time, and counts attempts by outcome as the worker records them', async () => {
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/ok`);
    const failing = await w.tenant();
    await createHook(failing, `${receiver.url}/fail`);
    const before = await scrape(w.h);
    const delivered0 = sample(before, 'tenure_webhook_delivery_attempts_total', { outcome: 'delivered' }) ?? 0;
    const retry0 = sample(before, 'tenure_webhook_delivery_attempts_total', { outcome: 'retry' }) ?? 0;

    await createMembership(t);
    await createMembership(failing);
    // The oldest due delivery has waited a minute.
    await w.h.database.db.execute(
      sql`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '60 seconds' WHERE project_id = ${t.projectId}`,
    );
    const queued = await scrape(w.h);
    expect(sample(queued, 'tenure_webhook_queue_depth'), queued).toBeGreaterThanOrEqual(2);
    expect(sample(queued, 'tenure_webhook_queue_oldest_due_age_seconds')).toBeGreaterThanOrEqual(59);

    expect(await w.worker.drain()).toBe(2);
    const after = await scrape(w.h);
    expect(sample(after, 'tenure_webhook_delivery_attempts_total', { outcome: 'delivered' }), after).toBe(delivered0 + 1);
    expect(sample(after, 'tenure_webhook_delivery_attempts_total', { outcome: 'retry' })).toBe(retry0 + 1);
  });

  it('reports live connections from the source the gateway sets', async () => {
    w.h.app.metrics.setLiveConnectionsSource(() => 7);
    expect(sample(await scrape(w.h), 'tenure_live_connections')).toBe(7);
  });

  it('includes the default process metrics', async () => {
    const text = await scrape(w.h);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });
});

describe('rate-limit rejections', () => {
  const h = useHarness({ env: { TENURE_RATE_LIMIT_KEY: '1', TENURE_SUSPENSION: 'false' } });

  it('are counted by the policy that refused', async () => {
    const t = await h.tenant();
    const list = () => t.request({ method: 'GET', url: `${t.base}/memberships` });
    expect((await list()).statusCode).toBe(200);
    expect((await list()).statusCode).toBe(429);
    expect((await list()).statusCode).toBe(429);
    expect(sample(await scrape(h), 'tenure_rate_limit_rejections_total', { policy: 'key' })).toBe(2);
  });
});

describe('TENURE_METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789abcdef';
  const h = useHarness({ env: { TENURE_METRICS_TOKEN: token } });

  it.each([
    ['no Authorization', {}],
    ['a wrong token', { authorization: 'Bearer metrics-token-0123456789abcdeX' }],
    ['an API key', { authorization: 'Bearer tk_live_0000000000000000000000000000000000000000' }],
  ])('answers 401 in the envelope to %s', async (_name, headers: Record<string, string>) => {
    const res = await h.app.inject({ method: 'GET', url: '/metrics', headers });
    expect(res.statusCode, res.body).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toEqual({
      ok: false,
      request_id: expect.stringMatching(UUID),
      method: 'GET',
      path: '/metrics',
      code: 401,
      error: { error_code: 'UNAUTHORIZED', message: 'Metrics need the bearer token set in TENURE_METRICS_TOKEN' },
    });
  });

  it('serves the metrics with the token; probes still need none', async () => {
    expect(await scrape(h, { authorization: `Bearer ${token}` })).toContain('tenure_http_requests_total');
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});
