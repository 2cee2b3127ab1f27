import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMembership } from '../support/api.js';
import { onPostgres } from '../support/harness.js';
import { attemptRows, createHook, createWebhookHarness, deliveryRows, eventually, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * The worker as the server runs it: woken by the commit of a change (LISTEN/NOTIFY on
 * PostgreSQL, PGlite's in-process notification on embedded storage), bounded per endpoint, and
 * giving up on a receiver that does not answer in time. Waits are bounded, never timed.
 */
describe(`webhook worker loop (${onPostgres ? 'LISTEN/NOTIFY' : 'in-process signal'})`, () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness({
      timeoutMs: 500,
      env: { TENURE_WEBHOOK_CONCURRENCY: '4', TENURE_WEBHOOK_ENDPOINT_CONCURRENCY: '2' },
    });
    receiver = await startReceiver((r) => (r.path.startsWith('/slow') ? 'stall' : { status: 200 }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });
  beforeEach(() => w.h.reset());

  it('is woken by the commit, not by polling: the idle poll is an hour, the event arrives', async () => {
    const runtime = await w.startRuntime({ pollMs: 3_600_000, sweepIntervalMs: 3_600_000 });
    try {
      const t = await w.tenant();
      await createHook(t, `${receiver.url}/wake`);
      // The loop is asleep for an hour before the event commits: only the notification can wake it.
      await eventually(() => runtime.worker.state === 'sleeping', 'the worker is idle');
      const before = receiver.requests.length;
      await createMembership(t);
      const got = await receiver.waitUntil((r) => r.slice(before).some((x) => x.path === '/wake'), 10_000);
      expect(got.slice(before).filter((x) => x.path === '/wake')).toHaveLength(1);
    } finally {
      await runtime.stop();
    }
  });

  it('bounds attempts in flight per endpoint, so a stalled receiver cannot starve another', async () => {
    const runtime = await w.startRuntime({ pollMs: 200, sweepIntervalMs: 3_600_000, timeoutMs: 30_000 });
    try {
      const t = await w.tenant();
      await createHook(t, `${receiver.url}/slow`);
      await createHook(t, `${receiver.url}/fast`);
      const before = receiver.requests.length;
      for (let i = 0; i < 6; i++) await createMembership(t);
      // Global concurrency is 4. Without the per-endpoint bound of 2 the stalled endpoint could hold
      // all 4 slots and the fast one would get nothing; with it, the fast one gets all 6.
      const got = await receiver.waitUntil((r) => r.slice(before).filter((x) => x.path === '/fast').length === 6, 20_000);
      expect(got.slice(before).filter((x) => x.path === '/slow').length).toBeLessThanOrEqual(2);
      await receiver.waitUntil((r) => r.slice(before).filter((x) => x.path === '/slow').length === 2, 10_000);
      // Once the fast endpoint's attempts are recorded, exactly the two stalled ones remain in flight.
      await eventually(() => runtime.worker.inFlight === 2, 'only the stalled attempts in flight');
    } finally {
      await runtime.stop(); // aborts the stalled attempts and gives their leases back
    }
  });

  it('gives up on a receiver that does not answer in time: a timeout, retried', async () => {
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/slow/timeout`);
    await createMembership(t);
    await w.worker.drain();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await attemptRows(w.h, delivery!.id)).toMatchObject([
      { attempt: 1, status_code: null, error_class: 'timeout', outcome: 'retry', error_message: 'no answer within 500 ms' },
    ]);
  });

  it('gives leases back when stopped mid-attempt, due at once and nothing recorded', async () => {
    const runtime = await w.startRuntime({ pollMs: 200, sweepIntervalMs: 3_600_000, timeoutMs: 30_000 });
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/slow/stop`);
    const before = receiver.requests.length;
    await createMembership(t);
    await receiver.waitUntil((r) => r.slice(before).some((x) => x.path === '/slow/stop'), 10_000);
    await runtime.stop();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, leased_by: null });
    expect(await attemptRows(w.h, delivery!.id)).toStrictEqual([]);
    expect(new Date(delivery!.next_attempt_at).getTime()).toBeLessThanOrEqual(Date.now());
  });
});
