import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userId } from '../../../test/support/harness.js';
import { createWebhookHarness, type WebhookHarness } from '../../../test/support/webhook-harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../../test/support/webhook-receiver.js';
import { createTenureClient, verifyWebhook, WebhookVerificationError, type TenureClient } from '../src/index.js';

/**
 * The verifier on real deliveries: a tenure server (listening, with its delivery worker) sends
 * signed requests to a real receiver; the client's verifier accepts them under both schemes and
 * refuses any tampering, a wrong secret and a stale timestamp.
 */

let w: WebhookHarness;
let receiver: Receiver;
let tenure: TenureClient;
let projectId: string;
let secret: string;
let hookId: string;
let delivery: ReceivedRequest;

beforeAll(async () => {
  w = await createWebhookHarness();
  receiver = await startReceiver();
  const baseUrl = await w.h.app.listen({ port: 0, host: '127.0.0.1' });
  const t = await w.tenant();
  projectId = t.projectId;
  tenure = createTenureClient({ baseUrl, apiKey: t.key });
  const hook = await tenure.POST('/v2/projects/{project_id}/integrations/webhooks', {
    params: { path: { project_id: projectId } },
    body: { url: `${receiver.url}/hooks/tenure` },
  });
  expect(hook.response.status, JSON.stringify(hook.error)).toBe(200);
  ({ secret, id: hookId } = hook.data!.data);
  delivery = await deliverOne('membership.created');
});
afterAll(async () => {
  await w?.close();
  await receiver?.close();
});

/** Creates a membership through the API and lets the worker deliver its event. */
async function deliverOne(type: string): Promise<ReceivedRequest> {
  const before = receiver.requests.length;
  const created = await tenure.POST('/v2/projects/{project_id}/memberships', {
    params: { path: { project_id: projectId } },
    body: { user_id: userId(), end_date: new Date(Date.now() + 86_400_000).toISOString() },
  });
  expect(created.response.status, JSON.stringify(created.error)).toBe(201);
  await w.worker.drain();
  const [request] = (await receiver.waitFor(before + 1)).slice(before);
  expect(request!.headers['x-webhook-event']).toBe(type);
  return request!;
}

const verify = (request: ReceivedRequest, options: Partial<Parameters<typeof verifyWebhook>[0]> = {}) =>
  verifyWebhook({ body: request.body, headers: request.headers, secret, ...options });

describe('verifyWebhook on a real delivery', () => {
  it('accepts the Standard Webhooks signature and returns the event', async () => {
    const event = await verify(delivery, { scheme: 'standard' });
    expect(event).toMatchObject({ type: 'membership.created', project_id: projectId });
    expect(event.event_id).toBe(delivery.headers['webhook-id']);
  });

  it('accepts the X-Webhook-Signature signature', async () => {
    expect((await verify(delivery, { scheme: 'tenure' })).type).toBe('membership.created');
  });

  it('takes the secret in its whsec_ form and the headers as a Headers object too', async () => {
    const whsec = `whsec_${Buffer.from(secret, 'hex').toString('base64')}`;
    const headers = new Headers(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)] as [string, string]));
    for (const scheme of ['standard', 'tenure'] as const) {
      expect((await verifyWebhook({ body: delivery.body, headers, secret: whsec, scheme })).type).toBe('membership.created');
      expect((await verifyWebhook({ body: new TextEncoder().encode(delivery.body), headers, secret, scheme })).type).toBe('membership.created');
    }
  });

  it.each(['standard', 'tenure'] as const)('refuses a tampered body, a wrong secret and a stale timestamp (%s)', async (scheme) => {
    const tampered = delivery.body.replace('membership.created', 'membership.deleted');
    expect(tampered).not.toBe(delivery.body);
    await expect(verify(delivery, { scheme, body: tampered })).rejects.toThrow(WebhookVerificationError);
    await expect(verify(delivery, { scheme, body: `${delivery.body} ` })).rejects.toThrow(/No matching signature/);
    await expect(verify(delivery, { scheme, secret: 'ab'.repeat(32) })).rejects.toThrow(/No matching signature/);
    const sentAt = Number(delivery.headers['webhook-timestamp']) * 1000;
    await expect(verify(delivery, { scheme, now: new Date(sentAt + 301_000) })).rejects.toThrow(/300 seconds/);
    await expect(verify(delivery, { scheme, now: new Date(sentAt - 301_000) })).rejects.toThrow(/300 seconds/);
    expect((await verify(delivery, { scheme, now: new Date(sentAt + 299_000) })).type).toBe('membership.created');
  });

  it('refuses a signature moved to another timestamp, and missing headers', async () => {
    const t = Number(delivery.headers['webhook-timestamp']);
    const moved = String(delivery.headers['x-webhook-signature']).replace(`t=${t}`, `t=${t + 1}`);
    await expect(verify(delivery, { scheme: 'tenure', headers: { ...delivery.headers, 'x-webhook-signature': moved } })).rejects.toThrow(
      /No matching signature/,
    );
    await expect(verify(delivery, { scheme: 'standard', headers: { ...delivery.headers, 'webhook-timestamp': String(t + 1) } })).rejects.toThrow(
      /No matching signature/,
    );
    await expect(verify(delivery, { headers: {} })).rejects.toThrow(/Missing X-Webhook-Signature/);
    await expect(verify(delivery, { scheme: 'standard', headers: {} })).rejects.toThrow(/Missing webhook-id/);
  });

  it('accepts either secret while a rotation lasts, under both schemes', async () => {
    const rotated = await tenure.POST('/v2/projects/{project_id}/integrations/webhooks/{webhook_id}/rotate-secret', {
      params: { path: { project_id: projectId, webhook_id: hookId } },
    });
    expect(rotated.response.status, JSON.stringify(rotated.error)).toBe(200);
    const next = await deliverOne('membership.created');
    for (const scheme of ['standard', 'tenure'] as const) {
      expect((await verify(next, { scheme, secret: rotated.data!.data.secret })).type).toBe('membership.created');
      expect((await verify(next, { scheme })).type).toBe('membership.created');
    }
  });
});
