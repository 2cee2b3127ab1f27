import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMembership } from '../support/api.js';
import {
  attemptRows,
  createHook,
  createWebhookHarness,
  deliveryRows,
  webhookBodyOf,
  type WebhookHarness,
} from '../support/webhook-harness.js';
import { startReceiver, verifyProductSignature, verifyStandardSignature, type Receiver } from '../support/webhook-receiver.js';

/**
 * Delivery to a real receiver on the wall clock: what an attempt looks like on the wire, both
 * signatures verified the way receivers verify them, and what the delivery log records.
 */
describe('webhook delivery to a real receiver', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness();
    receiver = await startReceiver((r) => (r.path.startsWith('/big') ? { status: 200, body: 'x'.repeat(5000) } : { status: 204 }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });

  it('POSTs the stored body with the headers of docs/webhooks.md, signed twice; receivers verify both', async () => {
    const t = await w.tenant();
    const hook = await createHook(t, `${receiver.url}/in/sig?x=1`);
    const before = receiver.requests.length;
    const m = await createMembership(t);
    expect(await w.worker.drain()).toBe(1);
    const [request] = receiver.requests.slice(before);
    const [delivery] = await deliveryRows(w.h, t.projectId);

    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/in/sig?x=1');
    expect(request!.body).toBe(await webhookBodyOf(w.h, delivery!.event_id));
    const h = request!.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h['x-webhook-id']).toBe(delivery!.event_id);
    expect(h['x-webhook-event']).toBe('membership.created');
    expect(h['x-webhook-attempt']).toBe('1');
    expect(h['x-webhook-signature']).toMatch(/^v1=[0-9a-f]{64},t=\d{10}$/);
    expect(h['webhook-id']).toBe(delivery!.event_id);
    expect(h['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(h['x-webhook-signature']).toContain(`,t=${h['webhook-timestamp']}`);
    expect(Math.abs(Number(h['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);

    expect(verifyProductSignature(request!, hook.secret)).toBe(Number(h['webhook-timestamp']));
    expect(verifyStandardSignature(request!, hook.secret)).toStrictEqual(JSON.parse(request!.body));
    expect(verifyProductSignature(request!, 'f'.repeat(64))).toBeNull();
    expect(() => verifyStandardSignature(request!, 'f'.repeat(64))).toThrow(/No matching signature/);
    expect((JSON.parse(request!.body) as { data: { membership: unknown } }).data.membership).toStrictEqual(m);

    expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'delivered', attempts: 1, leased_by: null }]);
    expect(await attemptRows(w.h, delivery!.id)).toMatchObject([
      { attempt: 1, status_code: 204, error_class: null, outcome: 'delivered', next_attempt_at: null, response_excerpt: null },
    ]);
  });

  it('keeps only a capped excerpt of a response body', async () => {
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/big`);
    await createMembership(t);
    await w.worker.drain();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    const [attempt] = await attemptRows(w.h, delivery!.id);
    expect(attempt!.status_code).toBe(200);
    expect(attempt!.response_excerpt).toBe('x'.repeat(1024));
  });

  it('records a refused connection as a retried attempt with its error class', async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const t = await w.tenant();
    await createHook(t, `${url}/gone`);
    await createMembership(t);
    await w.worker.drain();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    const [attempt] = await attemptRows(w.h, delivery!.id);
    expect(attempt).toMatchObject({ attempt: 1, status_code: null, error_class: 'connection', outcome: 'retry' });
    expect(attempt!.error_message).toMatch(/ECONNREFUSED/);
  });

  it('delivers to every webhook of the project, each signed with its own secret', async () => {
    const t = await w.tenant();
    const hooks = await Promise.all([1, 2, 3].map((n) => createHook(t, `${receiver.url}/multi/${n}`)));
    const before = receiver.requests.length;
    await createMembership(t);
    expect(await w.worker.drain()).toBe(3);
    const got = receiver.requests.slice(before);
    for (const [n, hook] of hooks.entries()) {
      const request = got.find((r) => r.path === `/multi/${n + 1}`)!;
      expect(verifyProductSignature(request, hook.secret)).not.toBeNull();
      expect(verifyStandardSignature(request, hook.secret)).toBeTruthy();
    }
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
  });
});
