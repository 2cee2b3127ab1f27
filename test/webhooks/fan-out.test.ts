import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, eventRows, failEventInserts } from '../support/api.js';
import { future, userId } from '../support/harness.js';
import { createHook, createWebhookHarness, deliveryRows, webhookBodyOf, type WebhookHarness } from '../support/webhook-harness.js';

/**
 * The fan-out: for each event row, one delivery per enabled webhook of the project, written by
 * the trigger on `events` in the event's own transaction, with the body stored once.
 */
describe('webhook fan-out', () => {
  let w: WebhookHarness;
  beforeAll(async () => {
    w = await createWebhookHarness();
  });
  afterAll(() => w.close());

  const eventIds = async (projectId: string) =>
    rowsOf<{ id: string; type: string }>(
      await w.h.database.db.execute(sql`SELECT id, type FROM events WHERE project_id = ${projectId} ORDER BY seq`),
    );

  it('creates one delivery per enabled webhook of the project for each event, and none for other projects', async () => {
    const t = await w.tenant();
    const other = await w.tenant();
    const a = await createHook(t, 'http://127.0.0.1:9/a');
    const b = await createHook(t, 'http://127.0.0.1:9/b');
    const off = await createHook(t, 'http://127.0.0.1:9/off');
    await t.request({ method: 'PATCH', url: `${t.base}/integrations/webhooks/${off.id}`, payload: { enabled: false } });
    await createHook(other, 'http://127.0.0.1:9/other');

    const m = await createMembership(t);
    const [event] = await eventIds(t.projectId);
    const rows = await deliveryRows(w.h, t.projectId);
    expect(rows.map((r) => [r.event_id, r.webhook_id, r.event_type, r.status, r.attempts]).sort()).toStrictEqual(
      [
        [event!.id, a.id, 'membership.created', 'pending', 0],
        [event!.id, b.id, 'membership.created', 'pending', 0],
      ].sort(),
    );
    expect(await deliveryRows(w.h, other.projectId)).toStrictEqual([]);

    // The body both deliveries send: the event object of docs/webhooks.md, compact.
    const body = await webhookBodyOf(w.h, event!.id);
    const [row] = await eventRows(w.h, t.projectId);
    const emitted = rowsOf<{ ms: string }>(
      await w.h.database.db.execute(sql`SELECT (extract(epoch FROM emitted_at) * 1000)::bigint::text AS ms FROM events WHERE id = ${event!.id}`),
    )[0]!.ms;
    expect(JSON.parse(body)).toStrictEqual({
      event_id: event!.id,
      type: 'membership.created',
      project_id: t.projectId,
      emitted_at: Number(emitted),
      data: row!.data,
    });
    expect(Object.keys(JSON.parse(body))).toStrictEqual(['event_id', 'type', 'project_id', 'emitted_at', 'data']);
    expect((JSON.parse(body) as { data: { membership: unknown } }).data.membership).toStrictEqual(m);
  });

  it('fans out every kind of membership change, one bulk-extended event per bulk call', async () => {
    const t = await w.tenant();
    const hook = await createHook(t, 'http://127.0.0.1:9/all');
    const m1 = await createMembership(t);
    await createMembership(t);
    await t.request({ method: 'PATCH', url: `${t.base}/memberships/${m1.user_id}/extend`, payload: { extend: future(40).iso } });
    const bulkEnd = future(50).iso;
    await t.request({ method: 'PATCH', url: `${t.base}/memberships/extend`, payload: { extend: bulkEnd } });
    await t.request({ method: 'DELETE', url: `${t.base}/memberships/${m1.membership_id}` });
    const rows = await deliveryRows(w.h, t.projectId);
    expect(rows.map((r) => r.event_type)).toStrictEqual([
      'membership.created',
      'membership.created',
      'membership.extended',
      'membership.bulk-extended',
      'membership.deleted',
    ]);
    expect(new Set(rows.map((r) => r.webhook_id))).toStrictEqual(new Set([hook.id]));
    const bulk = JSON.parse(await webhookBodyOf(w.h, rows[3]!.event_id)) as { data: unknown };
    expect(bulk.data).toStrictEqual({ total: 2, new_end_date: bulkEnd });
  });

  it('writes no delivery when the change rolls back', async () => {
    const t = await w.tenant();
    await createHook(t, 'http://127.0.0.1:9/rollback');
    const restore = await failEventInserts(w.h, t.projectId);
    try {
      const res = await t.request({ method: 'POST', url: `${t.base}/memberships`, payload: { user_id: userId(), end_date: future(5).iso } });
      expect(res.statusCode, res.body).toBe(500);
    } finally {
      await restore();
    }
    expect(await deliveryRows(w.h, t.projectId)).toStrictEqual([]);
  });

  it('writes no delivery for a project without webhooks', async () => {
    const t = await w.tenant();
    await createMembership(t);
    expect(await eventIds(t.projectId)).toHaveLength(1);
    expect(await deliveryRows(w.h, t.projectId)).toStrictEqual([]);
  });

  it('sends webhook.test only to the webhook it is for', async () => {
    const t = await w.tenant();
    const a = await createHook(t, 'http://127.0.0.1:9/a');
    await createHook(t, 'http://127.0.0.1:9/b');
    const res = await t.request({ method: 'POST', url: `${t.base}/integrations/webhooks/${a.id}/test` });
    expect(res.statusCode, res.body).toBe(202);
    const rows = await deliveryRows(w.h, t.projectId);
    expect(rows.map((r) => [r.webhook_id, r.event_type, r.id])).toStrictEqual([[a.id, 'webhook.test', res.json().data.delivery_id]]);
    expect(JSON.parse(await webhookBodyOf(w.h, rows[0]!.event_id)).data).toStrictEqual({
      message: 'This is a test event from tenure.',
      webhook_id: a.id,
    });
  });
});
