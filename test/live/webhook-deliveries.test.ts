import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from '../../src/webhooks/retry-policy.js';
import { createMembership } from '../support/api.js';
import type { Tenant } from '../support/harness.js';
import { createHook, createWebhookHarness, deliveryRows, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { createLiveHarness, type LiveClient, type LiveHarness } from './live-harness.js';

/**
 * The webhook-deliveries channel: a delivery's final outcome (succeeded,
 * dropped, retries exhausted) and an endpoint disabled after 5 days of failures, as live-only
 * events written with the outcome itself, broadcast like any other and never sent to webhooks.
 * The delivery worker runs on a clock the test moves.
 */

const DAY = 86_400_000;

let w: WebhookHarness;
let lh: LiveHarness;
let receiver: Receiver;
beforeAll(async () => {
  w = await createWebhookHarness({ manualClock: true, random: () => 0.5 });
  lh = await createLiveHarness({ harness: { h: w.h, tenant: () => w.tenant() } });
  receiver = await startReceiver((r) => ({ status: Number(/^\/status\/(\d{3})/.exec(r.path)?.[1] ?? 404) }));
});
afterAll(async () => {
  await lh.close().catch(() => undefined);
  await receiver.close();
  // The live harness closed the app and database; the worker and its sender remain.
  await w.worker.stop(0);
});

const event = (t: Tenant) => createMembership(t, { endDate: new Date(w.clock.now().getTime() + 365 * DAY).toISOString() });

async function watching(t: Tenant): Promise<LiveClient> {
  const c = await lh.connect(t);
  await c.act({ action: 'subscribe', channel: 'webhook-deliveries' }, 'subscribed');
  return c;
}

const eventOf = (c: LiveClient, type: string, nth = 0) =>
  c.until(() => c.events().filter((e) => e.event === type)[nth]?.payload, `${type} #${nth}`);

describe('webhook-deliveries channel', () => {
  it('announces a delivered webhook with the delivery, the event and the answer', async () => {
    const t = await lh.tenant();
    const c = await watching(t);
    const hook = await createHook(t, `${receiver.url}/status/200`);
    await event(t);
    expect(await w.worker.drain()).toBe(1);
    const [delivery] = await deliveryRows(w.h, t.projectId);
    const [attempt] = rowsOf<{ duration_ms: number }>(
      await w.h.database.db.execute(sql`SELECT duration_ms FROM webhook_delivery_attempts WHERE delivery_id = ${delivery!.id}`),
    );
    const announced = await eventOf(c, 'webhook.delivery-succeeded');
    expect(announced).toStrictEqual({
      event_id: expect.any(String),
      type: 'webhook.delivery-succeeded',
      project_id: t.projectId,
      emitted_at: expect.any(Number),
      channel: 'webhook-deliveries',
      data: {
        webhook_id: hook.id,
        delivery_id: delivery!.id,
        event_id: delivery!.event_id,
        event_type: 'membership.created',
        attempt: 1,
        status_code: 200,
        duration_ms: attempt!.duration_ms,
      },
    });
  });

  it('announces a dropped delivery as failed, with its reason', async () => {
    const t = await lh.tenant();
    const c = await watching(t);
    const hook = await createHook(t, `${receiver.url}/status/400`);
    await event(t);
    await w.worker.drain();
    const announced = await eventOf(c, 'webhook.delivery-failed');
    expect(announced.data).toMatchObject({ webhook_id: hook.id, attempt: 1, status_code: 400, reason: 'dropped', error_class: 'http_status' });
  });

  it('announces nothing for an attempt that will be retried, and failed once retries are exhausted', async () => {
    const t = await lh.tenant();
    const c = await watching(t);
    const hook = await createHook(t, `${receiver.url}/status/503`);
    await event(t);
    await w.worker.drain();
    for (const delay of RETRY_SCHEDULE_MS) {
      w.advance(delay);
      await w.worker.drain();
    }
    const announced = await eventOf(c, 'webhook.delivery-failed');
    expect(announced.data).toMatchObject({ webhook_id: hook.id, attempt: MAX_ATTEMPTS, status_code: 503, reason: 'exhausted' });
    expect(c.events().map((e) => e.event)).toStrictEqual(['webhook.delivery-failed']);
  });

  it('announces an endpoint disabled after 5 days of failures', async () => {
    const t = await lh.tenant();
    const c = await watching(t);
    const hook = await createHook(t, `${receiver.url}/status/500`);
    await event(t);
    await w.worker.drain();
    w.advance(5 * DAY);
    await event(t);
    await w.worker.drain();
    const announced = await eventOf(c, 'webhook.endpoint-disabled');
    const get = await t.request({ method: 'GET', url: `${t.base}/integrations/webhooks/${hook.id}` });
    expect(announced.data).toStrictEqual({ webhook_id: hook.id, reason: 'failing', disabled_at: get.json().data.disabled_at });
    expect(get.json().data).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    expect(c.events().filter((e) => e.event === 'webhook.endpoint-disabled')).toHaveLength(1);
  });

  it('keeps these events from webhooks: no delivery is ever made of them', async () => {
    const t = await lh.tenant();
    await createHook(t, `${receiver.url}/status/200`);
    await event(t);
    await w.worker.drain();
    const rows = rowsOf<{ type: string; live_only: boolean; deliveries: number }>(
      await w.h.database.db.execute(sql`
        SELECT e.type, e.live_only, (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
        FROM events e WHERE e.project_id = ${t.projectId} ORDER BY e.seq`),
    );
    expect(rows).toStrictEqual([
      { type: 'membership.created', live_only: false, deliveries: 1 },
      { type: 'webhook.delivery-succeeded', live_only: true, deliveries: 0 },
    ]);
    expect(await w.worker.drain()).toBe(0);
  });
});
