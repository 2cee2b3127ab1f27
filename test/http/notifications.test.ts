import type { REST } from '@discordjs/rest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { RemindersJob } from '../../src/domain/lifecycle/reminders.job.js';
import type { NotificationView } from '../../src/domain/users/notification.view.js';
import { createLogger } from '../../src/logger.js';
import { createAccessWorker, createConfirmationJob } from '../../src/platform-jobs.js';
import { createMembership } from '../support/api.js';
import { discordBotShop, turnOffMessages, unreachableMembers, type BotShop } from '../support/front-desk.js';
import { userId, type Tenant } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import { eventsOf } from '../support/telegram.js';
import { createHook, createWebhookHarness, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * `GET /v2/projects/{project_id}/users/{user_id}/notifications` (docs/lifecycle.md, "What each
 * member was sent"): every message queued for a member and what became of it, newest first, paged,
 * without its text; and, for a member the bot cannot reach, one record and one
 * `notification.failed` however many reminders fail, while the owner's webhook gets every
 * `membership.expiring`. Reminders are written and sent on a manual clock.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('GET /v2/projects/{project_id}/users/{user_id}/notifications', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  const jobs: ConfirmationJob[] = [];
  let holder: AccessWorker<REST> | null = null;
  beforeAll(async () => {
    w = await createWebhookHarness({ manualClock: true });
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    await holder?.stop(0);
    holder = null;
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
  });

  const shop = () => discordBotShop(w.h, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: false, plan_one_time: true } });
  /** A shop whose members are not welcomed, so the messages listed are the reminders. */
  const quietShop = async () => {
    const s = await shop();
    await turnOffMessages(s.t, 'welcome');
    return s;
  };
  const remind = () => new RemindersJob(w.h.container.stores.reminders, w.clock, createLogger('silent'), { intervalMs: 60_000, batchSize: 1000 }).passOnce();
  const send = async () => {
    holder ??= createAccessWorker(w.h.container)!;
    if (jobs.length === 0) jobs.push(createConfirmationJob(w.h.container, { discord: holder, telegram: null }, { pollMs: 60_000 })!);
    await holder.leases.acquire();
    jobs[0]!.wake();
    await jobs[0]!.idle();
  };
  const endingIn = (s: BotShop, ms: number, user = userId()) =>
    createMembership(s.t, { userId: user, planId: s.planId, endDate: new Date(w.clock.now().getTime() + ms).toISOString() });
  const list = async (t: Tenant, user: string, query = '', headers?: Record<string, string>) => {
    const res = await t.request({ method: 'GET', url: `${t.base}/users/${user}/notifications${query}`, ...(headers ? { headers } : {}) });
    return { res, body: res.json() as { total: number; limit: number; offset: number; data: NotificationView[] } };
  };
  /** "HH:MM" of an instant in UTC. */
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);

  it('each message and its outcome, newest first: sent, held through quiet hours, then dropped after an extension; no text', async () => {
    const s = await quietShop();
    const m = await endingIn(s, 5 * DAY);
    await remind();
    w.advance(2 * DAY);
    await remind();
    await send();
    expect(w.h.discord.dms(s.bot.id, m.user_id)).toHaveLength(1);

    // Quiet from an hour before the 1d instant to two hours after it (UTC, the default time zone).
    const instant = new Date(w.clock.now().getTime() + 2 * DAY);
    const quietEnd = new Date(instant.getTime() + 2 * HOUR);
    const res = await s.t.request({ method: 'PATCH', url: `${s.t.base}/settings`, payload: { quiet_hours: `${hhmm(new Date(instant.getTime() - HOUR))}-${hhmm(quietEnd)}` } });
    expect(res.statusCode, res.body).toBe(204);
    w.advance(2 * DAY);
    await remind();
    await send();
    expect(w.h.discord.dms(s.bot.id, m.user_id)).toHaveLength(1);

    const { res: listed, body } = await list(s.t, m.user_id);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(body).toMatchObject({ ok: true, total: 2, limit: 20, offset: 0 });
    const endDate = m.membership_end_date;
    expect(body.data).toStrictEqual([
      {
        notification_id: expect.any(String), kind: 'reminder', platform: 'discord', state: 'held', attempts: 0, last_error: 'quiet hours',
        reminder: { offset: '1d', end_date: endDate }, created_at: w.clock.now().toISOString(), sent_at: null,
        next_attempt_at: new Date(Math.floor(quietEnd.getTime() / 60_000) * 60_000).toISOString(),
      },
      {
        notification_id: expect.any(String), kind: 'reminder', platform: 'discord', state: 'sent', attempts: 1, last_error: null,
        reminder: { offset: '3d', end_date: endDate }, created_at: new Date(w.clock.now().getTime() - 2 * DAY).toISOString(),
        sent_at: new Date(w.clock.now().getTime() - 2 * DAY).toISOString(), next_attempt_at: null,
      },
    ]);
    // No text: a reminder's carries a pay link made for the member alone.
    expect(listed.body).not.toMatch(/https?:|Renew|membership ends/);

    // Extended meanwhile: the held one names a date the membership no longer ends on, and is dropped when its hold ends.
    const newEnd = new Date(new Date(endDate).getTime() + 10 * DAY).toISOString();
    expect((await s.t.request({ method: 'PATCH', url: `${s.t.base}/memberships/${m.user_id}/extend`, payload: { extend: newEnd } })).statusCode).toBe(200);
    w.advance(3 * HOUR);
    await send();
    const after = (await list(s.t, m.user_id)).body.data;
    expect(after.map((n) => [n.reminder?.offset, n.state, n.next_attempt_at])).toStrictEqual([['1d', 'dropped', null], ['3d', 'sent', null]]);
    expect(after[0]!.last_error).toBe('the membership ends at another date now');
    expect(w.h.discord.dms(s.bot.id, m.user_id)).toHaveLength(1);

    // Paged like every list: limit and offset, total whatever the page.
    const second = await list(s.t, m.user_id, '?limit=1&offset=1');
    expect(second.body).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(second.body.data.map((n) => n.reminder?.offset)).toStrictEqual(['3d']);
    expect((await list(s.t, m.user_id, '?offset=5')).body).toMatchObject({ total: 2, data: [] });
    // A read key reads it.
    const read = await createKey(s.t, 'dashboard', 'read');
    expect((await list(s.t, m.user_id, '', { authorization: `Bearer ${read.key}` })).res.statusCode).toBe(200);
  });

  it('a member the bot cannot reach: recorded once, one notification.failed, every membership.expiring at the webhook; skipped shown', async () => {
    const s = await quietShop();
    await createHook(s.t, `${receiver.url}/owner`);
    const user = userId();
    w.h.discord.setDmsClosed(s.bot.id, user, true);
    const m = await endingIn(s, 5 * DAY, user);
    await remind();
    // Down past both offsets: an event for each, a message for the nearest only.
    w.advance(4 * DAY + 12 * HOUR);
    await remind();
    await send();
    await send();
    // Extended, and its new 3d instant reached: a second message that fails the same way.
    const newEnd = new Date(new Date(m.membership_end_date).getTime() + 10 * DAY).toISOString();
    expect((await s.t.request({ method: 'PATCH', url: `${s.t.base}/memberships/${user}/extend`, payload: { extend: newEnd } })).statusCode).toBe(200);
    w.advance(8 * DAY);
    await remind();
    await send();

    const messages = w.h.discord.calls.filter((c) => c.botId === s.bot.id && c.route === '/channels/{channel.id}/messages');
    expect(messages.map((c) => c.status)).toStrictEqual([403, 403]);
    expect(await unreachableMembers(w.h, s.t.projectId)).toStrictEqual([{ user_id: user, platform: 'discord', reason: 'dm_closed' }]);
    expect(await eventsOf(w.h, s.t.projectId, 'notification.failed')).toStrictEqual([{ user_id: user, channel: 'discord', reason: 'dm_closed' }]);

    const { body } = await list(s.t, user);
    expect(body.total).toBe(3);
    const rows = body.data.map((n) => [n.reminder?.end_date, n.reminder?.offset, n.state, n.platform, n.attempts]);
    expect(rows[0]).toStrictEqual([newEnd, '3d', 'unreachable', 'discord', 1]);
    // The two of the pass after the outage were written at one instant: their order is by id.
    expect(rows.slice(1)).toHaveLength(2);
    expect(rows.slice(1)).toStrictEqual(
      expect.arrayContaining([
        [m.membership_end_date, '3d', 'skipped', null, 0],
        [m.membership_end_date, '1d', 'unreachable', 'discord', 1],
      ]),
    );
    expect(body.data.find((n) => n.state === 'skipped')).toMatchObject({ notification_id: null, last_error: 'a nearer reminder was due at the same time' });
    expect(body.data.filter((n) => n.state === 'unreachable').map((n) => n.last_error)).toStrictEqual([
      '403: 50007 Cannot send messages to this user',
      '403: 50007 Cannot send messages to this user',
    ]);

    // The owner's backend hears of every offset reached, whatever the DMs did.
    await w.worker.drain();
    const received = receiver.requests.filter((r) => r.path === '/owner').map((r) => JSON.parse(r.body) as { type: string; data: { offset?: string; end_date?: string } });
    expect(received.filter((e) => e.type === 'membership.expiring').map((e) => [e.data.end_date, e.data.offset]).sort()).toStrictEqual(
      [[m.membership_end_date, '1d'], [m.membership_end_date, '3d'], [newEnd, '3d']].sort(),
    );
    expect(received.filter((e) => e.type === 'notification.failed')).toHaveLength(1);
  });

  it('404 for a user the project has not seen; 422 naming a bad limit or offset', async () => {
    const s = await shop();
    const { res } = await list(s.t, userId());
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ ok: false, error: { error_code: 'NOT_FOUND', message: 'User not found' } });
    const m = await endingIn(s, 5 * DAY);
    for (const [query, field] of [['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?limit=abc', 'limit'], ['?offset=-1', 'offset'], ['?offset=1.5', 'offset']] as const) {
      const bad = await list(s.t, m.user_id, query);
      expect(bad.res.statusCode, query).toBe(422);
      expect(bad.res.body, query).toContain(`${field} must be an integer`);
    }
    // Known: made through the API, so welcomed (docs/lifecycle.md), the welcome queued for the bot.
    expect((await list(s.t, m.user_id)).body).toMatchObject({ total: 1, data: [{ kind: 'welcome', platform: 'discord', state: 'queued', attempts: 0, reminder: null, sent_at: null }] });
  });
});
