import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import type { Tenant } from '../support/harness.js';
import { createWebhookHarness, deliveryRows, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * The dashboard's webhooks and messages pages (docs/dashboard-settings.md): endpoints added (the
 * secret shown once), their secret rotated (the new one shown once) and removed after a confirmation, the delivery log with the last error, a
 * replay through WebhooksService.replayDelivery; reminder times and member messages written through
 * SettingsService (a bad value: its 422 message on the page, nothing stored); all under
 * settings.integrations:write, refused without it even when posted directly.
 */
describe('dashboard webhooks and messages pages', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness();
    receiver = await startReceiver((r) => (r.path.startsWith('/fail') ? { status: 500, body: 'down for maintenance' } : { status: 200 }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });
  const hooksOf = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/integrations/webhooks` })).json().data as { id: string; url: string }[];
  const secretsOf = async (id: string) =>
    rowsOf<{ secret: string; previous_secret: string | null }>(await w.h.database.db.execute(sql`SELECT secret, previous_secret FROM webhooks WHERE id = ${id}`))[0];
  const settingsOf = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/settings` })).json().data as Record<string, unknown>;

  it('adds a webhook (secret shown once), shows its deliveries with the last error, replays one, removes it after a confirmation', async () => {
    const t = await w.tenant();
    const b = new DashboardBrowser(w.h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    expect((await b.get(`${p}/webhooks`)).body).toContain('Add a webhook');
    const added = await b.post(`${p}/webhooks/create`, { url: `${receiver.url}/fail` });
    expect(added.statusCode, added.body).toBe(200);
    const secret = /<code class="secret">([0-9a-f]{64})<\/code>/.exec(added.body)?.[1];
    expect(secret).toBeDefined();
    const [hook] = await hooksOf(t);
    expect(hook!.url).toBe(`${receiver.url}/fail`);
    const list = await b.get(`${p}/webhooks`);
    expect(list.body).toContain(hook!.url);
    expect(list.body).not.toContain(secret!);

    await b.get(`${p}/webhooks/${hook!.id}`);
    expect((await b.post(`${p}/webhooks/${hook!.id}/test`)).statusCode).toBe(303);
    await w.worker.drain();
    const log = await b.get(`${p}/webhooks/${hook!.id}`);
    expect(log.body).toContain('webhook.test');
    expect(log.body).toContain('HTTP 500');
    const [delivery] = await deliveryRows(w.h, t.projectId);

    // Delivered once the receiver answers: a replay is a new delivery of the same event.
    const ok = await b.post(`${p}/webhooks/create`, { url: `${receiver.url}/ok` });
    expect(ok.statusCode).toBe(200);
    const okHook = (await hooksOf(t)).find((x) => x.url.endsWith('/ok'))!;
    await b.post(`${p}/webhooks/${okHook.id}/test`);
    await w.worker.drain();
    const okLog = await b.get(`${p}/webhooks/${okHook.id}`);
    expect(okLog.body).toMatch(/class="tag ok">delivered/);
    const okDelivery = /deliveries\/([0-9a-f-]{36})\/replay/.exec(okLog.body)![1]!;
    const before = (await deliveryRows(w.h, t.projectId)).length;
    const replay = await b.post(`${p}/webhooks/${okHook.id}/deliveries/${okDelivery}/replay`);
    expect(replay.statusCode, replay.body).toBe(303);
    expect(replay.headers.location).toBe(`${p}/webhooks/${okHook.id}?notice=replayed`);
    expect(await deliveryRows(w.h, t.projectId)).toHaveLength(before + 1);
    expect((await b.get(replay.headers.location as string)).body).toContain('>replay</span>');
    expect(delivery).toBeDefined();

    const missing = await b.post(`${p}/webhooks/${okHook.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`);
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('Delivery not found');
    expect(await deliveryRows(w.h, t.projectId)).toHaveLength(before + 1);

    expect((await b.get(`${p}/webhooks/${hook!.id}/remove`)).body).toContain('Remove this webhook?');
    expect(await hooksOf(t)).toHaveLength(2);
    expect((await b.post(`${p}/webhooks/${hook!.id}/remove`)).statusCode).toBe(303);
    expect((await hooksOf(t)).map((x) => x.id)).toStrictEqual([okHook.id]);

    const audit = await b.get(`${p}/audit`);
    const actions = [...audit.body.matchAll(/<code>([a-z.-]+)<\/code>/g)].map((m) => m[1]).filter((a) => !a!.startsWith('session.'));
    expect(actions).toStrictEqual(['webhook.remove', 'webhook.replay', 'webhook.test', 'webhook.add', 'webhook.test', 'webhook.add']);
    expect(audit.body).not.toContain(secret!);
  });

  it('rotates a signing secret after a confirmation: the new one shown once on the answer, never in the address or the audit; the old one signs 24 hours more', async () => {
    const t = await w.tenant();
    const b = new DashboardBrowser(w.h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/webhooks`);
    const added = await b.post(`${p}/webhooks/create`, { url: `${receiver.url}/ok` });
    const first = /<code class="secret">([0-9a-f]{64})<\/code>/.exec(added.body)![1]!;
    const [hook] = await hooksOf(t);
    const before = await secretsOf(hook!.id);
    expect(before!.previous_secret).toBeNull();
    expect((await b.get(`${p}/webhooks`)).body).toContain(`href="${p}/webhooks/${hook!.id}/rotate-secret"`);

    const confirm = await b.get(`${p}/webhooks/${hook!.id}/rotate-secret`);
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(confirm.body).toContain('Rotate the signing secret of this webhook?');
    expect(confirm.body).toContain('keeps signing next to the new one for 24 hours');
    expect(confirm.body).toContain('then it stops working');
    const rotated = await b.post(`${p}/webhooks/${hook!.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.headers.location).toBeUndefined();
    expect(rotated.headers['cache-control']).toBe('no-store');
    expect(rotated.body).toContain('Signing secret rotated');
    expect(rotated.body).toContain('The old secret stops working in 24 hours');
    const second = /<code class="secret">([0-9a-f]{64})<\/code>/.exec(rotated.body)![1]!;
    expect(second).not.toBe(first);
    const after = await secretsOf(hook!.id);
    expect(after!.secret).not.toBe(before!.secret);
    expect(after!.previous_secret).toBe(before!.secret);

    expect((await b.get(`${p}/webhooks`)).body).not.toContain(second);
    const audit = await b.get(`${p}/audit`);
    expect(audit.body).toContain('webhook.rotate-secret');
    expect(audit.body).not.toContain(second);
    expect(audit.body).not.toContain(first);
  });

  it('rotating an unknown webhook, or without the CSRF token: a clear page and no secret changed', async () => {
    const t = await w.tenant();
    const b = new DashboardBrowser(w.h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/webhooks`);
    await b.post(`${p}/webhooks/create`, { url: `${receiver.url}/ok` });
    const [hook] = await hooksOf(t);
    const before = await secretsOf(hook!.id);
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      for (const res of [await b.get(`${p}/webhooks/${id}/rotate-secret`), await b.post(`${p}/webhooks/${id}/rotate-secret`)]) {
        expect(res.statusCode, id).toBe(404);
        expect(res.body).toContain('Webhook not found');
        expect(res.body).not.toContain('class="secret"');
      }
    }
    for (const csrf of ['', 'forged']) {
      const res = await b.post(`${p}/webhooks/${hook!.id}/rotate-secret`, { _csrf: csrf });
      expect(res.statusCode).toBe(403);
      expect(res.body).not.toContain('class="secret"');
    }
    expect(await secretsOf(hook!.id)).toStrictEqual(before);
  });

  it('a bad webhook address shows the reason and adds nothing', async () => {
    const t = await w.tenant();
    const b = new DashboardBrowser(w.h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/webhooks`);
    const bad = await b.post(`${p}/webhooks/create`, { url: 'ftp://example.com/x' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toMatch(/class="error" role="alert">[^<]*url/);
    expect(bad.body).toContain('value="ftp://example.com/x"');
    const empty = await b.post(`${p}/webhooks/create`, { url: '' });
    expect(empty.statusCode).toBe(422);
    expect(await hooksOf(t)).toStrictEqual([]);
  });

  it('saves reminder times and a message text; a bad placeholder or value is the 422 message on the page and nothing is stored', async () => {
    const t = await w.tenant();
    const b = new DashboardBrowser(w.h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    const page = await b.get(`${p}/messages`);
    expect(page.body).toContain('Welcome! Your {plan} membership is active until {end_date}.');
    const timing = await b.post(`${p}/messages/timing`, { reminder_offsets: '7d, 1d', quiet_hours: '22:00-08:00' });
    expect(timing.statusCode, timing.body).toBe(303);
    expect(await settingsOf(t)).toMatchObject({ reminder_offsets: ['7d', '1d'], quiet_hours: '22:00-08:00' });
    const badTiming = await b.post(`${p}/messages/timing`, { reminder_offsets: '7d', quiet_hours: '25:00-08:00' });
    expect(badTiming.statusCode).toBe(422);
    expect(badTiming.body).toContain('quiet_hours must be null or');
    expect(badTiming.body).toContain('value="25:00-08:00"');

    const saved = await b.post(`${p}/messages/reminder`, { enabled: 'on', text: 'Hi {name}! {plan} ends {end_date}.' });
    expect(saved.statusCode, saved.body).toBe(303);
    const off = await b.post(`${p}/messages/welcome`, { text: '' });
    expect(off.statusCode).toBe(303);
    const messages = { reminder: { enabled: true, text: 'Hi {name}! {plan} ends {end_date}.' }, welcome: { enabled: false, text: null } };
    expect((await settingsOf(t)).messages).toStrictEqual(messages);
    const bad = await b.post(`${p}/messages/expired`, { enabled: 'on', text: 'Bye {nmae}' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('messages.expired.text uses unknown placeholder {nmae}');
    expect(bad.body).toContain('>Bye {nmae}</textarea>');
    expect((await settingsOf(t)).messages).toStrictEqual(messages);
    expect(await settingsOf(t)).toMatchObject({ reminder_offsets: ['7d', '1d'], quiet_hours: '22:00-08:00' });
  });

  it('without settings.integrations:write: no page, no form, and direct POSTs with a valid token are 403 and change nothing', async () => {
    const t = await w.tenant();
    const owner = new DashboardBrowser(w.h);
    await owner.signIn(t);
    await owner.get(`/dashboard/${t.projectId}/webhooks`);
    await owner.post(`/dashboard/${t.projectId}/webhooks/create`, { url: `${receiver.url}/ok` });
    const [hook] = await hooksOf(t);
    const admin = await createAdmin(t, ['plans:read']);
    const b = new DashboardBrowser(w.h);
    await b.signIn(t, admin.user_id);
    const p = `/dashboard/${t.projectId}`;
    const secrets = await secretsOf(hook!.id);
    for (const page of ['/webhooks', '/messages', `/webhooks/${hook!.id}`, `/webhooks/${hook!.id}/rotate-secret`]) {
      const res = await b.get(`${p}${page}`);
      expect(res.statusCode, page).toBe(403);
      expect(res.body).toContain('settings.integrations:write');
      expect(res.body).not.toContain('Add webhook');
    }
    await b.get(`${p}/plans`);
    expect(b.csrf).not.toBe('');
    for (const [url, body] of [
      [`${p}/webhooks/create`, { url: `${receiver.url}/x` }],
      [`${p}/webhooks/${hook!.id}/remove`, {}],
      [`${p}/webhooks/${hook!.id}/rotate-secret`, {}],
      [`${p}/messages/welcome`, { text: 'Hacked' }],
      [`${p}/messages/timing`, { reminder_offsets: 'none' }],
    ] as const) {
      const res = await b.post(url, body);
      expect(res.statusCode, url).toBe(403);
    }
    expect(await hooksOf(t)).toHaveLength(1);
    expect(await secretsOf(hook!.id)).toStrictEqual(secrets);
    expect(await settingsOf(t)).toMatchObject({ reminder_offsets: ['3d', '1d'], messages: {} });
  });
});
