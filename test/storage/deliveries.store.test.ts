import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveriesStore } from '../../src/store/deliveries.store.js';
import { createMembership } from '../support/api.js';
import type { Tenant } from '../support/harness.js';
import { attemptRows, createHook, createWebhookHarness, deliveryRows, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * The delivery store's claim and record statements, where the storages can differ: a lease
 * keeps a claimed delivery from every other worker until it runs out, a late finisher is fenced
 * off, and one batch of results keeps an endpoint's failure streak right. Driven by an injected
 * clock (test/webhooks/retries.test.ts has the retry rules themselves).
 */

const DAY = 86_400_000;

describe('delivery store: leases and batches', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness({ manualClock: true });
    receiver = await startReceiver(() => ({ status: 200 }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });

  /** A membership.created event; the end date is a year ahead of the (moving) clock. */
  const event = (t: Tenant) => createMembership(t, { endDate: new Date(w.clock.now().getTime() + 365 * DAY).toISOString() });

  it('retries a delivery whose worker died once its lease runs out, fencing off the late finisher', async () => {
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/status/200`);
    await event(t);
    const store = new DeliveriesStore(w.h.database.db);
    const now = w.clock.now();
    const leaseMs = w.h.config.webhooks.leaseMs;
    const {
      deliveries: [claimed],
    } = await store.claim({
      workerId: 'dead-worker',
      now,
      leaseUntil: new Date(now.getTime() + leaseMs),
      limit: 10,
      perEndpoint: 10,
      inFlight: new Map(),
      perProject: 10,
      projectsInFlight: new Map(),
    });
    expect(claimed).toMatchObject({ attempt: 1, eventType: 'membership.created' });
    // Leased: nobody else takes it…
    w.advance(leaseMs - 1);
    expect(await w.worker.drain()).toBe(0);
    // …until the lease runs out.
    w.advance(1);
    const before = receiver.requests.length;
    expect(await w.worker.drain()).toBe(1);
    expect(receiver.requests.slice(before).map((r) => r.headers['x-webhook-attempt'])).toStrictEqual(['2']);
    expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'delivered', attempts: 2, leased_by: null }]);
    // The dead worker coming back cannot overwrite what the live one recorded.
    const late = await store.completeMany('dead-worker', [
      {
      id: claimed!.id,
      attempt: 1,
      attemptedAt: now,
      completedAt: now,
      durationMs: 1,
      statusCode: 500,
      errorClass: 'http_status',
      errorMessage: null,
      responseExcerpt: null,
      outcome: 'retry',
      nextAttemptAt: now,
      disableIfFailingSince: new Date(0),
      },
    ]);
    expect(late).toStrictEqual({ recorded: new Set(), disabledWebhookIds: [] });
    expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'delivered', attempts: 2 }]);
    expect((await attemptRows(w.h, claimed!.id)).map((a) => [a.attempt, a.outcome])).toStrictEqual([[2, 'delivered']]);
  });

  it('keeps the failure streak right when one batch records successes and failures of an endpoint', async () => {
    const t = await w.tenant();
    const hook = await createHook(t, `${receiver.url}/status/200`);
    for (let i = 0; i < 6; i++) await event(t);
    const store = new DeliveriesStore(w.h.database.db);
    const base = w.clock.now().getTime();
    const claimAll = async () =>
      (
        await store.claim({
          workerId: 'batch',
          now: w.clock.now(),
          leaseUntil: new Date(w.clock.now().getTime() + 60_000),
          limit: 3,
          perEndpoint: 3,
          inFlight: new Map(),
          perProject: 3,
          projectsInFlight: new Map(),
        })
      ).deliveries;
    const record = (id: string, at: number, delivered: boolean) => ({
      id,
      attempt: 1,
      attemptedAt: new Date(at),
      completedAt: new Date(at + 1),
      durationMs: 1,
      statusCode: delivered ? 200 : 500,
      errorClass: delivered ? null : 'http_status',
      errorMessage: null,
      responseExcerpt: null,
      outcome: delivered ? ('delivered' as const) : ('retry' as const),
      nextAttemptAt: delivered ? null : new Date(at + 5_000),
      disableIfFailingSince: new Date(at - 5 * DAY),
    });
    const since = async () => (await t.request({ method: 'GET', url: `${t.base}/integrations/webhooks/${hook.id}` })).json().data.failing_since;

    // failure, success, failure: the streak starts at the last failure.
    const [a, b, c] = await claimAll();
    const first = await store.completeMany('batch', [record(a!.id, base, false), record(b!.id, base + 10, true), record(c!.id, base + 20, false)]);
    expect(first.recorded).toStrictEqual(new Set([a!.id, b!.id, c!.id]));
    expect(await since()).toBe(new Date(base + 20).toISOString());

    // success then failures: the streak restarts at the first failure after the success; failures
    // 5 days into a streak that began before the batch disable the endpoint.
    const [d, e, f] = await claimAll();
    const second = await store.completeMany('batch', [
      record(d!.id, base + 5 * DAY + 20, false),
      record(e!.id, base + 5 * DAY + 30, false),
      record(f!.id, base + 5 * DAY + 40, false),
    ]);
    expect(second.disabledWebhookIds).toStrictEqual([hook.id]);
    expect((await t.request({ method: 'GET', url: `${t.base}/integrations/webhooks/${hook.id}` })).json().data).toMatchObject({
      enabled: false,
      disabled_reason: 'failing',
      failing_since: new Date(base + 20).toISOString(),
      disabled_at: new Date(base + 5 * DAY + 41).toISOString(),
    });
  });
});
