import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMembership, expectError, expectSuccess, ISO_MS, UUID, webhookRows } from '../support/api.js';
import type { Tenant } from '../support/harness.js';
import { createHook, createWebhookHarness, deliveryRows, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, verifyProductSignature, type Receiver } from '../support/webhook-receiver.js';
import { productSignature, standardSignature } from '../../src/webhooks/signing.js';

/**
 * The management API: list and get (never the secret), enable/disable, rotate-secret, test,
 * the delivery log, replays; with their 404, 409 and 422 answers.
 */

const HOUR = 3_600_000;

describe('webhook management API', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness({ manualClock: true, random: () => 0.5, env: { TENURE_WEBHOOK_MAX_PER_PROJECT: '3' } });
    receiver = await startReceiver((r) => (r.path.startsWith('/fail') ? { status: 500, body: 'down for maintenance' } : { status: 200 }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });
  beforeEach(() => w.h.reset());

  const hooks = (t: Tenant) => `${t.base}/integrations/webhooks`;
  const get = (t: Tenant, url: string) => t.request({ method: 'GET', url });
  const post = (t: Tenant, url: string) => t.request({ method: 'POST', url });
  const event = (t: Tenant) => createMembership(t, { endDate: new Date(w.clock.now().getTime() + 365 * 24 * HOUR).toISOString() });

  describe('list and get', () => {
    it('lists the project’s webhooks newest first, without their secrets', async () => {
      const t = await w.tenant();
      const a = await createHook(t, `${receiver.url}/a`);
      const b = await createHook(t, `${receiver.url}/b`);
      const res = await get(t, hooks(t));
      const data = res.json().data as { id: string }[];
      const [rowA, rowB] = [a, b].map((x) => ({
        id: x.id,
        url: x.url,
        enabled: true,
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        previous_secret_expires_at: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      }));
      expect(data.map((d) => d.id).sort()).toStrictEqual([a.id, b.id].sort());
      expectSuccess(res, {
        method: 'GET',
        path: hooks(t),
        total: 2,
        message: 'Webhooks retrieved successfully',
        data: data[0]!.id === b.id ? [rowB, rowA] : [rowA, rowB],
      });
      expect(res.body).not.toContain(a.secret);
      expect(res.body).not.toContain(b.secret);
      expect(res.body).not.toContain('secret"');
    });

    it('pages with limit and offset, total counting all', async () => {
      const t = await w.tenant();
      for (const n of [1, 2, 3]) await createHook(t, `${receiver.url}/p${n}`);
      const page = await get(t, `${hooks(t)}?limit=2&offset=2`);
      expect(page.json()).toMatchObject({ total: 3, data: [expect.objectContaining({ id: expect.stringMatching(UUID) })] });
      const bad = await get(t, `${hooks(t)}?limit=0`);
      expectError(bad, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path: hooks(t), message: 'limit must be an integer from 1 to 100' });
    });

    it('gets one webhook without its secret; 404 for another project’s or an unknown id; 422 for a malformed one', async () => {
      const t = await w.tenant();
      const other = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/one`);
      const res = await get(t, `${hooks(t)}/${hook.id}`);
      expectSuccess(res, {
        method: 'GET',
        path: `${hooks(t)}/${hook.id}`,
        message: 'Webhook retrieved successfully',
        data: expect.objectContaining({ id: hook.id, url: hook.url, enabled: true }),
      });
      expect(res.body).not.toContain(hook.secret);
      const foreign = await get(other, `${hooks(other)}/${hook.id}`);
      expectError(foreign, { status: 404, code: 'NOT_FOUND', method: 'GET', path: `${hooks(other)}/${hook.id}`, message: 'Webhook not found' });
      const malformed = await get(t, `${hooks(t)}/nope`);
      expectError(malformed, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path: `${hooks(t)}/nope`, message: 'webhook_id must be a UUID' });
    });
  });

  describe('create', () => {
    it('refuses more webhooks than TENURE_WEBHOOK_MAX_PER_PROJECT with 409; deleting one makes room', async () => {
      const t = await w.tenant();
      const made = [];
      for (const n of [1, 2, 3]) made.push(await createHook(t, `${receiver.url}/max${n}`));
      const res = await t.request({ method: 'POST', url: hooks(t), payload: { url: `${receiver.url}/max4` } });
      expectError(res, {
        status: 409,
        code: 'CONFLICT',
        method: 'POST',
        path: hooks(t),
        message: 'A project can have at most 3 webhooks; delete one first',
      });
      expect(await webhookRows(w.h, t.projectId)).toHaveLength(3);
      await t.request({ method: 'DELETE', url: `${hooks(t)}/${made[0]!.id}` });
      await createHook(t, `${receiver.url}/max4`);
    });

    it('counts concurrent creations against the limit', async () => {
      const t = await w.tenant();
      const results = await Promise.all(
        [1, 2, 3, 4, 5, 6].map((n) => t.request({ method: 'POST', url: hooks(t), payload: { url: `${receiver.url}/race${n}` } })),
      );
      expect(results.map((r) => r.statusCode).sort()).toStrictEqual([200, 200, 200, 409, 409, 409]);
      expect(await webhookRows(w.h, t.projectId)).toHaveLength(3);
    });
  });

  describe('enable and disable', () => {
    it('disables (cancelling pending deliveries, fanning out nothing new) and enables again', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/fail/toggle`);
      await event(t);
      await w.worker.drain();
      expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'pending', attempts: 1 }]);

      const path = `${hooks(t)}/${hook.id}`;
      const off = await t.request({ method: 'PATCH', url: path, payload: { enabled: false } });
      expectSuccess(off, {
        method: 'PATCH',
        path,
        message: 'Webhook updated successfully',
        data: expect.objectContaining({ id: hook.id, enabled: false, disabled_reason: 'manual', disabled_at: w.clock.now().toISOString() }),
      });
      expect(await deliveryRows(w.h, t.projectId)).toMatchObject([{ status: 'cancelled' }]);
      await event(t);
      expect(await deliveryRows(w.h, t.projectId)).toHaveLength(1);
      expectError(await post(t, `${path}/test`), { status: 409, code: 'CONFLICT', method: 'POST', path: `${path}/test`, message: 'Webhook is disabled; enable it first' });

      const on = await t.request({ method: 'PATCH', url: path, payload: { enabled: true } });
      expect(on.json().data).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
      await event(t);
      expect(await deliveryRows(w.h, t.projectId)).toHaveLength(2);
    });

    it.each([
      ['a string', { enabled: 'false' }, 'enabled must be a boolean'],
      ['a number', { enabled: 0 }, 'enabled must be a boolean'],
      ['nothing', {}, 'enabled is required'],
    ])('answers 422 for enabled as %s', async (_what, payload, message) => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/x`);
      const path = `${hooks(t)}/${hook.id}`;
      expectError(await t.request({ method: 'PATCH', url: path, payload }), { status: 422, code: 'VALIDATION_ERROR', method: 'PATCH', path, message });
    });

    it('answers 404 for an unknown webhook', async () => {
      const t = await w.tenant();
      const path = `${hooks(t)}/00000000-0000-4000-8000-000000000000`;
      expectError(await t.request({ method: 'PATCH', url: path, payload: { enabled: true } }), {
        status: 404,
        code: 'NOT_FOUND',
        method: 'PATCH',
        path,
        message: 'Webhook not found',
      });
    });
  });

  describe('rotate-secret', () => {
    it('returns a new secret once; the old one signs alongside it in both headers for 24 hours', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/rotate`);
      const path = `${hooks(t)}/${hook.id}/rotate-secret`;
      const res = await post(t, path);
      const rotated = res.json().data as { secret: string; previous_secret_expires_at: string };
      expect(rotated.secret).toMatch(/^[0-9a-f]{64}$/);
      expect(rotated.secret).not.toBe(hook.secret);
      expectSuccess(res, {
        method: 'POST',
        path,
        message: 'Webhook secret rotated successfully',
        data: expect.objectContaining({
          id: hook.id,
          secret: rotated.secret,
          previous_secret_expires_at: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
        }),
      });
      expect((await get(t, `${hooks(t)}/${hook.id}`)).body).not.toContain(rotated.secret);

      const before = receiver.requests.length;
      await event(t);
      await w.worker.drain();
      const [during] = receiver.requests.slice(before);
      const ts = Number(during!.headers['webhook-timestamp']);
      expect(during!.headers['x-webhook-signature']).toBe(
        `v1=${productSignature(rotated.secret, ts, during!.body)},v1=${productSignature(hook.secret, ts, during!.body)},t=${ts}`,
      );
      const id = during!.headers['webhook-id'] as string;
      expect(during!.headers['webhook-signature']).toBe(
        `v1,${standardSignature(rotated.secret, id, ts, during!.body)} v1,${standardSignature(hook.secret, id, ts, during!.body)}`,
      );
      expect(verifyProductSignature(during!, hook.secret)).toBe(ts);
      expect(verifyProductSignature(during!, rotated.secret)).toBe(ts);

      // 24 hours later only the new secret signs.
      w.advance(24 * HOUR);
      await event(t);
      await w.worker.drain();
      const after = receiver.requests.at(-1)!;
      expect(verifyProductSignature(after, rotated.secret)).not.toBeNull();
      expect(verifyProductSignature(after, hook.secret)).toBeNull();
      expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
      expect((await get(t, `${hooks(t)}/${hook.id}`)).json().data.previous_secret_expires_at).toBeNull();
    });

    it('keeps secrets out of the error of a failed rotation (it is logged)', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/rotate-fail`);
      expect(hook.id).toMatch(UUID); // spliced into DDL below
      const name = `tenure_test_fail_rotate_${hook.id.replaceAll('-', '')}`;
      await w.h.database.db.execute(
        sql.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$`),
      );
      await w.h.database.db.execute(
        sql.raw(`CREATE TRIGGER ${name} BEFORE UPDATE ON webhooks FOR EACH ROW WHEN (NEW.id = '${hook.id}'::uuid) EXECUTE FUNCTION ${name}()`),
      );
      try {
        const failed = await w.h.services.webhooks.rotateSecret(t.projectId, hook.id).then(
          () => null,
          (err: unknown) => err as Error,
        );
        expect(failed).toBeInstanceOf(Error);
        expect(failed!.message).toContain('Failed query');
        expect(failed!.message).not.toMatch(/[0-9a-f]{64}/);
        expect(failed!.message).not.toContain(hook.secret);
        const res = await post(t, `${hooks(t)}/${hook.id}/rotate-secret`);
        expect(res.statusCode, res.body).toBe(500);
        expect(res.body).not.toMatch(/[0-9a-f]{64}/);
      } finally {
        await w.h.database.db.execute(sql.raw(`DROP TRIGGER ${name} ON webhooks`));
        await w.h.database.db.execute(sql.raw(`DROP FUNCTION ${name}()`));
      }
    });

    it('keeps at most two secrets: rotating twice retires the first at once', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/rotate2`);
      const first = (await post(t, `${hooks(t)}/${hook.id}/rotate-secret`)).json().data.secret as string;
      const second = (await post(t, `${hooks(t)}/${hook.id}/rotate-secret`)).json().data.secret as string;
      await event(t);
      await w.worker.drain();
      const r = receiver.requests.at(-1)!;
      expect(verifyProductSignature(r, second)).not.toBeNull();
      expect(verifyProductSignature(r, first)).not.toBeNull();
      expect(verifyProductSignature(r, hook.secret)).toBeNull();
    });
  });

  describe('test event', () => {
    it('queues a webhook.test event for this webhook and delivers it', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/ping`);
      const path = `${hooks(t)}/${hook.id}/test`;
      const res = await post(t, path);
      const data = res.json().data as { event_id: string; delivery_id: string };
      expectSuccess(res, {
        status: 202,
        method: 'POST',
        path,
        message: 'Test event queued for delivery',
        data: { event_id: expect.stringMatching(UUID), delivery_id: expect.stringMatching(UUID) },
      });
      await w.worker.drain();
      const got = receiver.requests.at(-1)!;
      expect(got.headers['x-webhook-event']).toBe('webhook.test');
      expect(got.headers['x-webhook-id']).toBe(data.event_id);
      expect(JSON.parse(got.body)).toMatchObject({
        event_id: data.event_id,
        type: 'webhook.test',
        project_id: t.projectId,
        data: { message: 'This is a test event from tenure.', webhook_id: hook.id },
      });
      expect(verifyProductSignature(got, hook.secret)).not.toBeNull();
    });

    it('answers 404 for an unknown webhook', async () => {
      const t = await w.tenant();
      const path = `${hooks(t)}/00000000-0000-4000-8000-000000000000/test`;
      expectError(await post(t, path), { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'Webhook not found' });
    });
  });

  describe('delivery log', () => {
    it('shows each delivery with every attempt: status code, duration, error class, excerpt, next_attempt_at', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/fail/log`);
      await event(t);
      await w.worker.drain();
      w.advance(5_000);
      await w.worker.drain();
      const [row] = await deliveryRows(w.h, t.projectId);
      const path = `${hooks(t)}/${hook.id}/deliveries`;
      const res = await get(t, path);
      const attempt = (n: number, at: number) => ({
        attempt: n,
        attempted_at: new Date(at).toISOString(),
        status_code: 500,
        duration_ms: expect.any(Number),
        error_class: 'http_status',
        error_message: null,
        response_excerpt: 'down for maintenance',
        outcome: 'retry',
        next_attempt_at: new Date(at + (n === 1 ? 5_000 : 300_000)).toISOString(),
      });
      const now = w.clock.now().getTime();
      expectSuccess(res, {
        method: 'GET',
        path,
        total: 1,
        message: 'Webhook deliveries retrieved successfully',
        data: [
          {
            id: row!.id,
            webhook_id: hook.id,
            event_id: row!.event_id,
            event_type: 'membership.created',
            status: 'pending',
            attempt_count: 2,
            next_attempt_at: new Date(now + 300_000).toISOString(),
            created_at: expect.stringMatching(ISO_MS),
            completed_at: null,
            replay_of: null,
            attempts: [attempt(1, now - 5_000), attempt(2, now)],
          },
        ],
      });

      const one = await get(t, `${path}/${row!.id}`);
      expect(one.json().data).toStrictEqual(res.json().data[0]);
      expect((await get(t, `${path}?status=delivered`)).json()).toMatchObject({ total: 0, data: [] });
      expect((await get(t, `${path}?status=pending`)).json()).toMatchObject({ total: 1 });
      expectError(await get(t, `${path}?status=lost`), {
        status: 422,
        code: 'VALIDATION_ERROR',
        method: 'GET',
        path,
        message: 'status must be one of pending, delivered, failed, cancelled',
      });
    });

    it('answers 404 for an unknown webhook or delivery, and for a delivery of another webhook', async () => {
      const t = await w.tenant();
      const a = await createHook(t, `${receiver.url}/a`);
      const b = await createHook(t, `${receiver.url}/b`);
      const delivery = (await post(t, `${hooks(t)}/${a.id}/test`)).json().data.delivery_id as string;
      const unknown = '00000000-0000-4000-8000-000000000000';
      expectError(await get(t, `${hooks(t)}/${unknown}/deliveries`), {
        status: 404,
        code: 'NOT_FOUND',
        method: 'GET',
        path: `${hooks(t)}/${unknown}/deliveries`,
        message: 'Webhook not found',
      });
      for (const path of [`${hooks(t)}/${a.id}/deliveries/${unknown}`, `${hooks(t)}/${b.id}/deliveries/${delivery}`]) {
        expectError(await get(t, path), { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Delivery not found' });
      }
    });
  });

  describe('replay', () => {
    it('replays one delivery: a new delivery of the same event, same body bytes and id', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/replay-one`);
      await event(t);
      await w.worker.drain();
      const [first] = await deliveryRows(w.h, t.projectId);
      const path = `${hooks(t)}/${hook.id}/deliveries/${first!.id}/replay`;
      const res = await post(t, path);
      expectSuccess(res, {
        status: 202,
        method: 'POST',
        path,
        message: 'Delivery queued again',
        data: expect.objectContaining({ event_id: first!.event_id, status: 'pending', attempt_count: 0, replay_of: first!.id, attempts: [] }),
      });
      await w.worker.drain();
      const [original, replayed] = receiver.requests.filter((r) => r.path === '/replay-one');
      expect(replayed!.body).toBe(original!.body);
      expect(replayed!.headers['webhook-id']).toBe(original!.headers['webhook-id']);
      expect(replayed!.headers['x-webhook-attempt']).toBe('1');
      expect((await deliveryRows(w.h, t.projectId)).map((d) => d.status)).toStrictEqual(['delivered', 'delivered']);
    });

    it('refuses a replay to a disabled webhook with 409, an unknown delivery with 404', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/replay-off`);
      const delivery = (await post(t, `${hooks(t)}/${hook.id}/test`)).json().data.delivery_id as string;
      const unknown = `${hooks(t)}/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`;
      expectError(await post(t, unknown), { status: 404, code: 'NOT_FOUND', method: 'POST', path: unknown, message: 'Delivery not found' });
      await t.request({ method: 'PATCH', url: `${hooks(t)}/${hook.id}`, payload: { enabled: false } });
      const path = `${hooks(t)}/${hook.id}/deliveries/${delivery}/replay`;
      expectError(await post(t, path), { status: 409, code: 'CONFLICT', method: 'POST', path, message: 'Webhook is disabled; enable it first' });
      const range = `${hooks(t)}/${hook.id}/replay`;
      expectError(await post(t, `${range}?since=2020-01-01T00:00:00.000Z`), {
        status: 409,
        code: 'CONFLICT',
        method: 'POST',
        path: range,
        message: 'Webhook is disabled; enable it first',
      });
    });

    it('replays every event of a time range, events from before the webhook existed included', async () => {
      const t = await w.tenant();
      await event(t); // before any webhook: no delivery, no stored body
      const since = w.clock.now().toISOString();
      const hook = await createHook(t, `${receiver.url}/range`);
      await event(t);
      await event(t);
      await w.worker.drain();
      const path = `${hooks(t)}/${hook.id}/replay`;
      const until = new Date(w.clock.now().getTime() + HOUR).toISOString();
      const res = await post(t, `${path}?since=2020-01-01T00:00:00.000Z&until=${until}`);
      expectSuccess(res, {
        status: 202,
        method: 'POST',
        path,
        message: 'Events queued again for delivery',
        data: { replayed: 3, since: '2020-01-01T00:00:00.000Z', until },
      });
      await w.worker.drain();
      const got = receiver.requests.filter((r) => r.path === '/range');
      expect(got).toHaveLength(5);
      expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(3);
      expect(since).toMatch(ISO_MS);
    });

    it('never queues a second pending delivery of an event: a replay answers the pending one, a range skips it', async () => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/replay-pending`);
      await event(t);
      const [pending] = await deliveryRows(w.h, t.projectId);
      expect(pending!.status).toBe('pending');
      const one = await post(t, `${hooks(t)}/${hook.id}/deliveries/${pending!.id}/replay`);
      expect(one.statusCode, one.body).toBe(202);
      expect(one.json().data).toMatchObject({ id: pending!.id, replay_of: null, status: 'pending' });
      const range = `${hooks(t)}/${hook.id}/replay?since=2020-01-01T00:00:00.000Z`;
      expect((await post(t, range)).json().data.replayed).toBe(0);
      expect(await deliveryRows(w.h, t.projectId)).toHaveLength(1);
      await w.worker.drain();
      expect((await post(t, range)).json().data.replayed).toBe(1);
      expect((await post(t, range)).json().data.replayed).toBe(0);
      expect((await deliveryRows(w.h, t.projectId)).map((d) => d.status).sort()).toStrictEqual(['delivered', 'pending']);
    });

    it('refuses a range of more than 1,000 events with 422 naming the limit and where to stop; nothing is queued', async () => {
      const t = await w.tenant();
      // 1,001 events, one a millisecond from 2021-01-01T00:00:00.001Z, before the webhook: no deliveries yet.
      await w.h.database.db.execute(sql`
        INSERT INTO events (project_id, type, data, emitted_at)
        SELECT ${t.projectId}, 'membership.bulk-extended', '{"total": 0, "new_end_date": "2030-01-01T00:00:00.000Z"}'::jsonb,
               timestamptz '2021-01-01T00:00:00Z' + make_interval(secs => i / 1000.0)
        FROM generate_series(1, 1001) AS i`);
      const hook = await createHook(t, `${receiver.url}/replay-many`);
      const path = `${hooks(t)}/${hook.id}/replay`;
      const since = '2020-01-01T00:00:00.000Z';
      const over = await post(t, `${path}?since=${since}`);
      expectError(over, {
        status: 422,
        code: 'VALIDATION_ERROR',
        method: 'POST',
        path,
        message: `The range holds more than 1000 events, the most one replay sends; replay since=${since}&until=2021-01-01T00:00:01.001Z first, then continue from 2021-01-01T00:00:01.001Z`,
      });
      expect(await deliveryRows(w.h, t.projectId)).toHaveLength(0);
      expect((await post(t, `${path}?since=${since}&until=2021-01-01T00:00:01.001Z`)).json().data.replayed).toBe(1000);
      expect((await post(t, `${path}?since=2021-01-01T00:00:01.001Z`)).json().data.replayed).toBe(1);
    });

    it('allows 10 range replays a minute per project, then answers 429 with Retry-After; other projects are not held back', async () => {
      const [t, other] = [await w.tenant(), await w.tenant()];
      const hook = await createHook(t, `${receiver.url}/replay-often`);
      const range = `${hooks(t)}/${hook.id}/replay?since=2020-01-01T00:00:00.000Z`;
      for (let i = 0; i < 10; i++) expect((await post(t, range)).statusCode).toBe(202);
      const refused = await post(t, range);
      // The 429 envelope (docs/rate-limits.md, "Over a limit"): error.code and retry_after.
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.json().error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringContaining('At most 10 range replays a minute per project') });
      expect(Number(refused.headers['retry-after'])).toBe(refused.json().error.retry_after);
      expect(refused.json().error.retry_after).toBeGreaterThan(0);
      const otherHook = await createHook(other, `${receiver.url}/replay-often-other`);
      expect((await post(other, `${hooks(other)}/${otherHook.id}/replay?since=2020-01-01T00:00:00.000Z`)).statusCode).toBe(202);
    });

    it.each([
      ['no since', '', 'since is required'],
      ['a date without milliseconds', '?since=2024-01-01T00:00:00Z', 'since must be a UTC ISO-8601 datetime'],
      ['milliseconds as a number', '?since=1704067200000', 'since must be a UTC ISO-8601 datetime'],
      ['since after until', '?since=2024-02-01T00:00:00.000Z&until=2024-01-01T00:00:00.000Z', 'since must be before until'],
      ['a bad until', '?since=2024-01-01T00:00:00.000Z&until=later', 'until must be a UTC ISO-8601 datetime'],
    ])('answers 422 for %s', async (_what, query, message) => {
      const t = await w.tenant();
      const hook = await createHook(t, `${receiver.url}/range-bad`);
      const path = `${hooks(t)}/${hook.id}/replay`;
      const res = await post(t, `${path}${query}`);
      expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringContaining(message) });
    });
  });
});
