import { describe, expect, it } from 'vitest';
import { createWebhook, expectError, expectSuccess, webhookRows } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { webhookDelete } from '../support/operations.js';

describe(`${webhookDelete.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/integrations/webhooks/${id}`;

  it('deletes a webhook and answers data null, no total', async () => {
    const t = await h.tenant();
    const hook = await createWebhook(t);
    const path = pathFor(t, hook.id);
    const res = await t.request({ method: 'DELETE', url: path });
    expectSuccess(res, { method: 'DELETE', path, message: 'Webhook deleted successfully', data: null });
    expect(await webhookRows(h, t.projectId)).toStrictEqual([]);
  });

  it('answers 404 when the same webhook is deleted again', async () => {
    const t = await h.tenant();
    const hook = await createWebhook(t);
    const path = pathFor(t, hook.id);
    const first = await t.request({ method: 'DELETE', url: path });
    expect(first.statusCode, first.body).toBe(200);
    const again = await t.request({ method: 'DELETE', url: path });
    expectError(again, { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'Webhook not found' });
  });

  it('deletes only the addressed webhook', async () => {
    const t = await h.tenant();
    const gone = await createWebhook(t, 'https://hooks.example.com/gone');
    const kept = await createWebhook(t, 'https://hooks.example.com/kept');
    const res = await t.request({ method: 'DELETE', url: pathFor(t, gone.id) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await webhookRows(h, t.projectId)).toStrictEqual([{ ...kept, enabled: true }]);
  });

  it('accepts the id in upper case (UUIDs compare case-insensitively)', async () => {
    const t = await h.tenant();
    const hook = await createWebhook(t);
    const path = pathFor(t, hook.id.toUpperCase());
    const res = await t.request({ method: 'DELETE', url: path });
    expectSuccess(res, { method: 'DELETE', path, message: 'Webhook deleted successfully', data: null });
    expect(await webhookRows(h, t.projectId)).toStrictEqual([]);
  });

  it('ignores a JSON body on DELETE', async () => {
    const t = await h.tenant();
    const hook = await createWebhook(t);
    const path = pathFor(t, hook.id);
    const res = await t.request({ method: 'DELETE', url: path, payload: { reason: 'cleanup' } });
    expectSuccess(res, { method: 'DELETE', path, message: 'Webhook deleted successfully', data: null });
  });
});
