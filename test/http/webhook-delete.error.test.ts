import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createWebhook, expectError, projectState, webhookRows } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { webhookDelete } from '../support/operations.js';

describe(`${webhookDelete.name}: errors`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/integrations/webhooks/${id}`;

  it.each([
    ['a word', 'not-a-uuid'],
    ['a number', '12345'],
    ['a UUID without dashes', randomUUID().replaceAll('-', '')],
    ['a UUID with a trailing character', `${randomUUID()}0`],
    ['a UUID in braces', `%7B${randomUUID()}%7D`],
  ])('answers 422 for a webhook_id that is %s; nothing changes', async (_what, id) => {
    const t = await h.tenant();
    await createWebhook(t);
    const before = await projectState(h, t.projectId);
    const path = pathFor(t, id);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'DELETE', path, message: 'webhook_id must be a UUID' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 404 for an id no webhook has; nothing changes', async () => {
    const t = await h.tenant();
    await createWebhook(t);
    const before = await projectState(h, t.projectId);
    const path = pathFor(t, randomUUID());
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'Webhook not found' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it("answers 404 for another project's webhook, which survives", async () => {
    const owner = await h.tenant();
    const hook = await createWebhook(owner);
    const t = await h.tenant();
    const path = pathFor(t, hook.id);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'Webhook not found' });
    expect(await webhookRows(h, owner.projectId)).toStrictEqual([{ ...hook, enabled: true }]);
  });
});
