import { describe, expect, it } from 'vitest';
import { startWorkerRuntime } from '../../src/worker-runtime.js';
import { createMembership, ISO_MS } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { callsFrom, eventsOf, listInvites, rowOf, telegramMember, telegramProject, useTelegramWorkers } from '../support/telegram.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Getting in on Telegram (docs/access-telegram.md), through the real app, the Telegram access
 * worker wired as the worker runtime wires it (drained), and grammY against the harness's fake Bot
 * API: a member gets one link of their own, announced by an event and listed by the API, which lets
 * one person in; a member already inside is synced without one. Joining is seen here by
 * getChatMember on the next grant (a resync); the handling of join updates is tested with it.
 */

const DAY_S = 86_400;

describe('Telegram access: getting in with a single-use link', () => {
  const h = useHarness();
  const worker = useTelegramWorkers(h);

  it('gives a member not in the chat exactly one link of their own: single-use, expiring, named after the membership; announced and listed', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p);
    const calls = callsFrom(h.telegram, p.bot);
    const before = Math.floor(Date.now() / 1000);

    await worker().drain();

    expect(calls.since().map((c) => [c.method, c.status])).toStrictEqual([
      ['getChatMember', 200],
      ['createChatInviteLink', 200],
    ]);
    const links = h.telegram.links(p.chatId);
    expect(links).toHaveLength(1);
    const link = links[0]!;
    expect(link).toMatchObject({ creator_id: Number(p.bot.id), member_limit: 1, creates_join_request: false, is_revoked: false, name: `m:${m.membership.membership_id.slice(0, 8)} u:${m.userId}` });
    expect(link.expire_date! - before).toBeGreaterThanOrEqual(DAY_S - 1);
    expect(link.expire_date! - before).toBeLessThanOrEqual(DAY_S + 5);

    const invite = {
      target_id: p.target.target_id,
      chat_id: String(p.chatId),
      invite_link: link.invite_link,
      kind: 'single_use',
      expires_at: new Date(link.expire_date! * 1000).toISOString(),
      created_at: expect.stringMatching(ISO_MS),
    };
    expect(await eventsOf(h, p.t.projectId, 'access.invite-created')).toStrictEqual([
      { user_id: m.userId, target_id: p.target.target_id, platform: 'telegram', membership_id: m.membership.membership_id, invite },
    ]);
    expect(await listInvites(p.t, m.membership.membership_id)).toStrictEqual([invite]);
    expect(await rowOf(h, p, m)).toMatchObject({
      desired: 'granted',
      applied: 'revoked',
      state: 'waiting_for_member',
      last_error: { code: 'invite_sent', message: 'waiting for the member to join with their invite link' },
    });
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toStrictEqual([]);
  });

  it('makes no second link: a second drain calls nothing, a resync asks again and hands out the same link', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p);
    const w = worker();
    await w.drain();
    const calls = callsFrom(h.telegram, p.bot);

    expect(await w.drain()).toBe(0);
    expect(calls.since()).toStrictEqual([]);

    const resync = await p.t.request({ method: 'POST', url: `${p.t.base}/access/resync`, payload: { user_id: m.userId } });
    expect(resync.statusCode, resync.body).toBe(200);
    await w.drain();
    expect(calls.since().map((c) => c.method)).toStrictEqual(['getChatMember']);
    expect(h.telegram.links(p.chatId)).toHaveLength(1);
    expect(await eventsOf(h, p.t.projectId, 'access.invite-created')).toHaveLength(1);
    expect(await listInvites(p.t, m.membership.membership_id)).toHaveLength(1);
    expect((await rowOf(h, p, m)).state).toBe('waiting_for_member');
  });

  it('the link lets its member in once and nobody after them; the next grant finds them inside and syncs', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p);
    const w = worker();
    await w.drain();
    const [invite] = await listInvites(p.t, m.membership.membership_id);

    expect(h.telegram.join(m.id, invite!.invite_link)).toStrictEqual({ result: 'joined' });
    const stranger = h.telegram.addUser();
    expect(h.telegram.join(stranger.id, invite!.invite_link)).toStrictEqual({ result: 'refused', reason: 'used_up' });
    expect(h.telegram.status(p.chatId, m.id)).toBe('member');
    expect(h.telegram.status(p.chatId, stranger.id)).toBe('left');

    // Until join updates are handled, the member shows up through getChatMember on the next grant.
    await p.t.request({ method: 'POST', url: `${p.t.base}/access/resync`, payload: { user_id: m.userId } });
    const calls = callsFrom(h.telegram, p.bot);
    await w.drain();
    expect(calls.since().map((c) => c.method)).toStrictEqual(['getChatMember']);
    expect(await rowOf(h, p, m)).toMatchObject({ state: 'synced', applied: 'granted', last_error: null });
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toStrictEqual([{ user_id: m.userId, target_id: p.target.target_id, platform: 'telegram' }]);
  });

  it('syncs a member already in the chat without a link', async () => {
    const p = await telegramProject(h, { kind: 'channel' });
    const m = await telegramMember(h, p, { place: 'in' });
    const calls = callsFrom(h.telegram, p.bot);

    await worker().drain();

    expect(calls.since().map((c) => c.method)).toStrictEqual(['getChatMember']);
    expect(h.telegram.links(p.chatId)).toStrictEqual([]);
    expect(await rowOf(h, p, m)).toMatchObject({ state: 'synced', applied: 'granted' });
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toHaveLength(1);
    expect(await eventsOf(h, p.t.projectId, 'access.invite-created')).toStrictEqual([]);
    expect(await listInvites(p.t, m.membership.membership_id)).toStrictEqual([]);
  });

  it('lifts a chat ban of a member who is not banned from the project (only_if_banned), then invites them', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p, { place: 'banned' });
    expect(h.telegram.status(p.chatId, m.id)).toBe('kicked');
    const calls = callsFrom(h.telegram, p.bot);

    await worker().drain();

    expect(calls.since().map((c) => [c.method, c.params.only_if_banned ?? null])).toStrictEqual([
      ['getChatMember', null],
      ['unbanChatMember', true],
      ['createChatInviteLink', null],
    ]);
    expect(h.telegram.status(p.chatId, m.id)).toBe('left');
    const [invite] = await listInvites(p.t, m.membership.membership_id);
    expect(h.telegram.join(m.id, invite!.invite_link)).toStrictEqual({ result: 'joined' });
  });
});

describe('Telegram access: getting in by join request (TENURE_TELEGRAM_INVITE_MODE=join_request)', () => {
  const h = useHarness({ env: { TENURE_TELEGRAM_INVITE_MODE: 'join_request', TENURE_TELEGRAM_INVITE_TTL_SECONDS: '3600' } });
  const worker = useTelegramWorkers(h);

  it('makes a join-request link for the member (no member limit), whose use files a request', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p);

    await worker().drain();

    const links = h.telegram.links(p.chatId);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ creates_join_request: true, is_revoked: false });
    expect(links[0]!.member_limit).toBeUndefined();
    expect(links[0]!.expire_date! - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(3600);
    const [invite] = await listInvites(p.t, m.membership.membership_id);
    expect(invite).toMatchObject({ kind: 'join_request', invite_link: links[0]!.invite_link });
    expect(h.telegram.join(m.id, invite!.invite_link)).toStrictEqual({ result: 'requested' });
    expect((await rowOf(h, p, m)).state).toBe('waiting_for_member');
  });
});

describe('Telegram access in the worker runtime', () => {
  const h = useHarness();

  it('runs the Telegram worker beside Discord’s: a new member gets their link with no drain, woken by the access wake-up; stop ends it', async () => {
    const runtime = await startWorkerRuntime(h.container, { pollMs: 60_000 });
    try {
      expect(runtime.telegram?.platform).toBe('telegram');
      expect(runtime.access?.platform).toBe('discord');
      const p = await telegramProject(h);
      // The planner runs in the runtime too: the membership's event is planned, the row's commit wakes the worker.
      const { id } = h.telegram.addUser();
      const membership = await createMembership(p.t, { userId: String(id), planId: p.plan.plan_id });
      await eventually(async () => (await listInvites(p.t, membership.membership_id)).length === 1, 'the link, made by the running worker');
      expect(runtime.telegram!.leases.get(p.t.projectId)?.botId).toBe(p.bot.id);
    } finally {
      await runtime.stop();
    }
    expect(runtime.telegram!.state).toBe('stopped');
  });
});
