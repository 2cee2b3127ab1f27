import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/retry-policy.js';
import { createMembership } from '../support/api.js';
import type { Tenant } from '../support/harness.js';
import {
  attemptRows,
  createHook,
  createWebhookHarness,
  deliveryRows,
  webhookBodyOf,
  type WebhookHarness,
} from '../support/webhook-harness.js';
import { startReceiver, verifyProductSignature, type Receiver } from '../support/webhook-receiver.js';

/**
 * Retry and drop rules, the schedule, jitter, Retry-After, leases and the 5-day disable, driven
 * by an injected clock: the test moves time, the worker drains what is due.
 */

const ms = (iso: string | null) => new Date(iso!).getTime();
const DAY = 86_400_000;

describe('webhook retries', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  let draw = 0.5;
  /** Status per path: /status/<code>[?retry-after=<v>]; /flip answers `flip` (a variable). */
  let flip = 500;
  beforeAll(async () => {
    w = await createWebhookHarness({ manualClock: true, random: () => draw });
    receiver = await startReceiver((r) => {
      const m = /^\/status\/(\d{3})(?:\?retry-after=(.+))?$/.exec(r.path);
      if (m) {
        const status = Number(m[1]);
        const headers: Record<string, string> = m[2] ? { 'retry-after': decodeURIComponent(m[2]) } : {};
        if (status >= 300 && status < 400) headers.location = `/status/200?redirected`;
        return { status, headers, body: `answer ${status}` };
      }
      if (r.path.startsWith('/flip')) return { status: flip };
      return { status: 404 };
    });
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });
  // The worker serves only the tenants of the running test (the clock moves by days here, and
  // an earlier test's retries would fall due too).
  beforeEach(() => w.h.reset());

  /** A membership.created event; the end date is a year ahead of the (moving) clock. */
  const event = (t: Tenant) => createMembership(t, { endDate: new Date(w.clock.now().getTime() + 365 * DAY).toISOString() });

  it('drops 400, 401, 403, 405, 406 and 422 at once; retries 3xx, 404, 408, 410, 429, 5xx and other 4xx after 5 s', async () => {
    const drop = [400, 401, 403, 405, 406, 422];
    const retry = [301, 302, 404, 408, 409, 410, 418, 429, 500, 502, 503, 504];
    const t = await w.tenant();
    const hooks = new Map<string, number>();
    for (const status of [...drop, ...retry]) hooks.set((await createHook(t, `${receiver.url}/status/${status}`)).id, status);
    await event(t);
    expect(await w.worker.drain()).toBe(drop.length + retry.length);

    for (const delivery of await deliveryRows(w.h, t.projectId)) {
      const status = hooks.get(delivery.webhook_id)!;
      const [attempt] = await attemptRows(w.h, delivery.id);
      const why = `status ${status}`;
      expect(attempt!.status_code, why).toBe(status);
      expect(attempt!.response_excerpt, why).toBe(`answer ${status}`);
      if (drop.includes(status)) {
        expect(delivery.status, why).toBe('failed');
        expect(attempt, why).toMatchObject({ outcome: 'dropped', error_class: 'http_status', next_attempt_at: null });
      } else {
        expect(delivery.status, why).toBe('pending');
        expect(attempt, why).toMatchObject({ outcome: 'retry', error_class: status < 400 ? 'redirect' : 'http_status' });
        expect(ms(attempt!.next_attempt_at) - ms(attempt!.attempted_at), why).toBe(5_000);
        expect(ms(delivery.next_attempt_at), why).toBe(ms(attempt!.next_attempt_at));
      }
    }
    // Redirects are not followed.
    expect(receiver.requests.filter((r) => r.path.includes('redirected'))).toStrictEqual([]);
    // Nothing is due before the retry time; at it, only the retried ones go again.
    w.advance(4_999);
    expect(await w.worker.drain()).toBe(0);
    w.advance(1);
    expect(await w.worker.drain()).toBe(retry.length);
  });

  it('follows the whole schedule with the same body and event id on every attempt, then gives up', async () => {
    const t = await w.tenant();
    const hook = await createHook(t, `${receiver.url}/status/503`);
    const before = receiver.requests.length;
    await event(t);
    await w.worker.drain();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    for (let n = 1; n <= 7; n++) {
      const [row] = await deliveryRows(w.h, t.projectId);
      w.advance(ms(row!.next_attempt_at) - w.clock.now().getTime());
      expect(await w.worker.drain(), `attempt ${n + 1}`).toBe(1);
    }
    const attempts = await attemptRows(w.h, delivery!.id);
    expect(attempts.map((a) => a.attempt)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(attempts.map((a) => a.outcome)).toStrictEqual([...Array(7).fill('retry'), 'exhausted']);
    expect(attempts.slice(0, 7).map((a) => ms(a.next_attempt_at) - ms(a.attempted_at))).toStrictEqual([...RETRY_SCHEDULE_MS]);
    expect(attempts[7]!.next_attempt_at).toBeNull();
    expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'failed', attempts: 8 }]);

    const sent = receiver.requests.slice(before);
    const body = await webhookBodyOf(w.h, delivery!.event_id);
    expect(sent.map((r) => r.headers['x-webhook-attempt'])).toStrictEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    expect(sent.every((r) => r.body === body)).toBe(true);
    expect(new Set(sent.map((r) => r.headers['x-webhook-id']))).toStrictEqual(new Set([delivery!.event_id]));
    expect(new Set(sent.map((r) => r.headers['webhook-id']))).toStrictEqual(new Set([delivery!.event_id]));
    // Each attempt is signed afresh with its own timestamp (the injected clock's).
    sent.forEach((r, i) => expect(verifyProductSignature(r, hook.secret)).toBe(Math.floor(ms(attempts[i]!.attempted_at) / 1000)));

    w.advance(30 * DAY);
    expect(await w.worker.drain()).toBe(0);
  });

  it('jitters each delay within ±20%', async () => {
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/status/500`);
    try {
      for (const [r, factor] of [
        [0, 0.8],
        [0.999999999, 1.2],
      ] as const) {
        draw = r;
        await event(t);
        await w.worker.drain();
        const rows = await deliveryRows(w.h, t.projectId);
        const [attempt] = await attemptRows(w.h, rows.at(-1)!.id);
        expect(ms(attempt!.next_attempt_at) - ms(attempt!.attempted_at)).toBe(5_000 * factor);
      }
    } finally {
      draw = 0.5;
    }
  });

  it('waits as long as Retry-After asks (seconds or an HTTP date), capped at the longest step', async () => {
    const t = await w.tenant();
    const at = new Date(w.clock.now().getTime() + 3_600_000).toUTCString(); // whole seconds
    const cases = new Map<string, number>();
    cases.set((await createHook(t, `${receiver.url}/status/429?retry-after=120`)).id, 120_000);
    cases.set((await createHook(t, `${receiver.url}/status/503?retry-after=${encodeURIComponent(at)}`)).id, Date.parse(at) - w.clock.now().getTime());
    cases.set((await createHook(t, `${receiver.url}/status/503?retry-after=1`)).id, 5_000);
    cases.set((await createHook(t, `${receiver.url}/status/429?retry-after=9999999`)).id, 10 * 3_600_000);
    await event(t);
    await w.worker.drain();
    for (const delivery of await deliveryRows(w.h, t.projectId)) {
      const [attempt] = await attemptRows(w.h, delivery.id);
      expect(ms(attempt!.next_attempt_at) - ms(attempt!.attempted_at)).toBe(cases.get(delivery.webhook_id));
    }
  });

  it('disables an endpoint whose deliveries all failed for 5 days, cancelling what was pending', async () => {
    const t = await w.tenant();
    flip = 500;
    const hook = await createHook(t, `${receiver.url}/flip/disable`);
    const start = w.clock.now().getTime();
    await event(t);
    await w.worker.drain();
    const get = async () => (await t.request({ method: 'GET', url: `${t.base}/integrations/webhooks/${hook.id}` })).json().data;
    expect(await get()).toMatchObject({ enabled: true, failing_since: new Date(start).toISOString() });

    // Failing for almost 5 days: still enabled.
    w.advance(5 * DAY - 1);
    await event(t);
    await w.worker.drain();
    expect(await get()).toMatchObject({ enabled: true, failing_since: new Date(start).toISOString(), disabled_reason: null });

    // A failure 5 days after the streak began disables it.
    w.advance(1);
    await event(t);
    await w.worker.drain();
    expect(await get()).toMatchObject({
      enabled: false,
      disabled_reason: 'failing',
      disabled_at: w.clock.now().toISOString(),
    });
    const rows = await deliveryRows(w.h, t.projectId);
    expect(rows.filter((r) => r.status === 'pending')).toStrictEqual([]);
    expect(rows.filter((r) => r.status === 'cancelled').length).toBeGreaterThan(0);

    // Disabled: new events are not delivered to it.
    const count = rows.length;
    await event(t);
    expect(await deliveryRows(w.h, t.projectId)).toHaveLength(count);
  });

  it('starts the 5 days again after any success', async () => {
    const t = await w.tenant();
    flip = 500;
    const hook = await createHook(t, `${receiver.url}/flip/reset`);
    await event(t);
    await w.worker.drain();
    w.advance(3 * DAY);
    flip = 200;
    await event(t);
    await w.worker.drain();
    const get = async () => (await t.request({ method: 'GET', url: `${t.base}/integrations/webhooks/${hook.id}` })).json().data;
    expect(await get()).toMatchObject({ enabled: true, failing_since: null });
    flip = 500;
    w.advance(3 * DAY);
    await event(t);
    await w.worker.drain();
    const streak = w.clock.now().toISOString();
    w.advance(3 * DAY);
    await event(t);
    await w.worker.drain();
    expect(await get()).toMatchObject({ enabled: true, failing_since: streak });
    flip = 200;
  });

  it('cancels pending deliveries when their webhook is deleted', async () => {
    const t = await w.tenant();
    const hook = await createHook(t, `${receiver.url}/status/500`);
    await event(t);
    await w.worker.drain();
    expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'pending', attempts: 1 }]);
    const res = await t.request({ method: 'DELETE', url: `${t.base}/integrations/webhooks/${hook.id}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(await deliveryRows(w.h, t.projectId)).toStrictEqual([]);
    const before = receiver.requests.length;
    w.advance(DAY);
    expect(await w.worker.drain()).toBe(0);
    expect(receiver.requests.length).toBe(before);
  });
});
