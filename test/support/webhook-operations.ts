import { expect } from 'vitest';
import { createWebhook } from './api.js';
import type { Harness, Tenant } from './harness.js';
import type { Operation } from './operations.js';

/**
 * The webhook management routes, described for the shared security and transport generators
 * (test/support/security.ts, transport.ts). Webhooks point at a name that does not resolve here,
 * which creation accepts (docs/webhooks.md); nothing is ever sent in these suites.
 */

const hooks = (t: Tenant) => `${t.base}/integrations/webhooks`;

/** A webhook with one delivery (its test event); returns both ids. */
async function hookWithDelivery(t: Tenant): Promise<{ hookId: string; deliveryId: string }> {
  const hook = await createWebhook(t);
  const res = await t.request({ method: 'POST', url: `${hooks(t)}/${hook.id}/test` });
  expect(res.statusCode, res.body).toBe(202);
  return { hookId: hook.id, deliveryId: res.json().data.delivery_id };
}

export const webhookList: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/webhooks',
  method: 'GET',
  successStatus: 200,
  async prepare(_h: Harness, t) {
    await createWebhook(t);
    return { url: `${hooks(t)}?limit=10&offset=0` };
  },
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const webhookGet: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/webhooks/{webhook_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${hooks(t)}/${(await createWebhook(t)).id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};

export const webhookUpdate: Operation = {
  name: 'PATCH /v2/projects/{project_id}/integrations/webhooks/{webhook_id}',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${hooks(t)}/${(await createWebhook(t)).id}`, payload: { enabled: false } };
  },
  invalidPayload: { enabled: 'no' },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'PUT',
};

export const webhookRotateSecret: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/rotate-secret',
  method: 'POST',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${hooks(t)}/${(await createWebhook(t)).id}/rotate-secret` };
  },
  allow: 'POST',
  wrongMethod: 'GET',
};

export const webhookTest: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/test',
  method: 'POST',
  successStatus: 202,
  async prepare(_h, t) {
    return { url: `${hooks(t)}/${(await createWebhook(t)).id}/test` };
  },
  allow: 'POST',
  wrongMethod: 'DELETE',
};

export const deliveryList: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/deliveries',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const { hookId } = await hookWithDelivery(t);
    return { url: `${hooks(t)}/${hookId}/deliveries?limit=5` };
  },
  allow: 'GET',
  wrongMethod: 'POST',
};

export const deliveryGet: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/deliveries/{delivery_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const { hookId, deliveryId } = await hookWithDelivery(t);
    return { url: `${hooks(t)}/${hookId}/deliveries/${deliveryId}` };
  },
  allow: 'GET',
  wrongMethod: 'DELETE',
};

export const deliveryReplay: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/deliveries/{delivery_id}/replay',
  method: 'POST',
  successStatus: 202,
  async prepare(_h, t) {
    const { hookId, deliveryId } = await hookWithDelivery(t);
    return { url: `${hooks(t)}/${hookId}/deliveries/${deliveryId}/replay` };
  },
  allow: 'POST',
  wrongMethod: 'GET',
};

export const webhookReplayRange: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/replay',
  method: 'POST',
  successStatus: 202,
  async prepare(_h, t) {
    const { hookId } = await hookWithDelivery(t);
    return { url: `${hooks(t)}/${hookId}/replay?since=2020-01-01T00:00:00.000Z` };
  },
  allow: 'POST',
  wrongMethod: 'PATCH',
};
