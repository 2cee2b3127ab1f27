import { describe, expect, it } from 'vitest';
import { targetHealth } from '../support/access-seed.js';
import { expireMembership } from '../support/api.js';
import { future, useHarness } from '../support/harness.js';
import {
  callsFrom,
  eventsOf,
  listInvites,
  rowOf,
  telegramMember,
  telegramProject,
  useTelegramWorkers,
  type TelegramMember,
  type TelegramProject,
} from '../support/telegram.js';

/**
 * Getting out of Telegram (docs/access-telegram.md): when a membership ends, the member's links
 * are revoked (used ones too: a single-use link counts members still inside, so it would open again
 * once they are out) and, with on_expiry `kick`, a member inside is removed: banned, then unbanned
 * with only_if_banned, so they can come back after paying; a member banned from the project stays
 * banned in the chat.
 */

describe('Telegram access: getting out', () => {
  const h = useHarness();
  const worker = useTelegramWorkers(h);

  /** A member who got their link, joined with it, and whose row was synced (as the next grant or the join's update does). */
  async function memberInside(p: TelegramProject, w: ReturnType<typeof worker>): Promise<{ m: TelegramMember; link: string }> {
    const m = await telegramMember(h, p);
    await w.drain();
    const [invite] = await listInvites(p.t, m.membership.membership_id);
    expect(h.telegram.join(m.id, invite!.invite_link)).toStrictEqual({ result: 'joined' });
    await p.t.request({ method: 'POST', url: `${p.t.base}/access/resync`, payload: { user_id: m.userId } });
    await w.drain();
    expect((await rowOf(h, p, m)).state).toBe('synced');
    return { m, link: invite!.invite_link };
  }

  async function expire(p: TelegramProject, m: TelegramMember): Promise<void> {
    await expireMembership(h, m.membership.membership_id);
    await h.container.stores.accessPlan.planProject(p.t.projectId);
  }

  it('on expiry revokes the member’s used link and kicks them (ban, then unban only_if_banned): out, not banned; back after paying', async () => {
    const p = await telegramProject(h);
    const w = worker();
    const { m, link } = await memberInside(p, w);
    await expire(p, m);
    const calls = callsFrom(h.telegram, p.bot);

    await w.drain();

    expect(calls.since().map((c) => [c.method, c.status])).toStrictEqual([
      ['revokeChatInviteLink', 200],
      ['getChatMember', 200],
      ['banChatMember', 200],
      ['unbanChatMember', 200],
    ]);
    const [, , ban, unban] = calls.since();
    // A ban that ends by itself should the unban not come (Telegram takes under 30 s as forever).
    expect(Number(ban!.params.until_date) - Math.floor(ban!.at / 1000)).toBeGreaterThan(30);
    expect(unban!.params.only_if_banned).toBe(true);
    expect(h.telegram.status(p.chatId, m.id)).toBe('left');
    // Out of the chat, the single-use link would count no member any more: revoked, it lets nobody in.
    expect(h.telegram.links(p.chatId).map((l) => l.is_revoked)).toStrictEqual([true]);
    expect(h.telegram.join(h.telegram.addUser().id, link)).toStrictEqual({ result: 'refused', reason: 'revoked' });
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'revoked', applied: 'revoked', state: 'synced', last_error: null });
    expect(await eventsOf(h, p.t.projectId, 'access.revoked')).toStrictEqual([{ user_id: m.userId, target_id: p.target.target_id, platform: 'telegram' }]);
    expect(await listInvites(p.t, m.membership.membership_id)).toStrictEqual([]);

    const extend = await p.t.request({ method: 'PATCH', url: `${p.t.base}/memberships/${m.userId}/extend`, payload: { extend: future(30).iso } });
    expect(extend.statusCode, extend.body).toBe(200);
    await h.container.stores.accessPlan.planProject(p.t.projectId);
    await w.drain();
    const [fresh] = await listInvites(p.t, m.membership.membership_id);
    expect(fresh!.invite_link).not.toBe(link);
    expect(h.telegram.join(m.id, fresh!.invite_link)).toStrictEqual({ result: 'joined' });
  });

  it('a deleted membership’s member is removed the same way', async () => {
    const p = await telegramProject(h, { kind: 'channel' });
    const w = worker();
    const { m } = await memberInside(p, w);
    const del = await p.t.request({ method: 'DELETE', url: `${p.t.base}/memberships/${m.membership.membership_id}` });
    expect(del.statusCode, del.body).toBe(204);
    await h.container.stores.accessPlan.planProject(p.t.projectId);

    await w.drain();

    expect(h.telegram.status(p.chatId, m.id)).toBe('left');
    expect(h.telegram.links(p.chatId).map((l) => l.is_revoked)).toStrictEqual([true]);
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'revoked', state: 'synced' });
  });

  it('a member banned from the project is removed and stays banned in the chat', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p, { place: 'in' });
    const w = worker();
    await w.drain();
    expect((await rowOf(h, p, m)).state).toBe('synced');
    const ban = await p.t.request({ method: 'PUT', url: `${p.t.base}/ban/${m.userId}`, payload: { reason: 'chargeback' } });
    expect(ban.statusCode, ban.body).toBe(200);
    await h.container.stores.accessPlan.planProject(p.t.projectId);
    const calls = callsFrom(h.telegram, p.bot);

    await w.drain();

    expect(calls.since().map((c) => c.method)).toStrictEqual(['getChatMember', 'banChatMember']);
    // Forever: no until_date, and no unban.
    expect(calls.since()[1]!.params.until_date).toBeUndefined();
    expect(h.telegram.status(p.chatId, m.id)).toBe('kicked');
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'revoked', state: 'synced' });
  });

  it('on_expiry none leaves the member in the chat', async () => {
    const p = await telegramProject(h, { onExpiry: 'none' });
    const w = worker();
    const { m } = await memberInside(p, w);
    await expire(p, m);
    const calls = callsFrom(h.telegram, p.bot);

    await w.drain();

    expect(calls.since().filter((c) => /ban/i.test(c.method))).toStrictEqual([]);
    expect(h.telegram.status(p.chatId, m.id)).toBe('member');
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'revoked', state: 'synced' });
  });

  it.each([
    ['kick', ['revokeChatInviteLink', 'getChatMember']],
    ['none', ['revokeChatInviteLink']],
  ] as const)('a revoke of a member still waiting (on_expiry %s) revokes their unused link, and removes nobody', async (onExpiry, methods) => {
    const p = await telegramProject(h, { onExpiry });
    const m = await telegramMember(h, p);
    const w = worker();
    await w.drain();
    const [invite] = await listInvites(p.t, m.membership.membership_id);
    await expire(p, m);
    const calls = callsFrom(h.telegram, p.bot);

    await w.drain();

    expect(calls.since().map((c) => c.method)).toStrictEqual(methods);
    expect(calls.since()[0]!.params.invite_link).toBe(invite!.invite_link);
    expect(h.telegram.join(m.id, invite!.invite_link)).toStrictEqual({ result: 'refused', reason: 'revoked' });
    expect(await listInvites(p.t, m.membership.membership_id)).toStrictEqual([]);
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'revoked', state: 'synced', last_error: null });
  });

  it('the chat’s owner cannot be removed: that row fails, the target stays healthy', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p, { place: 'in' });
    h.telegram.setOwner(p.chatId, m.id);
    const w = worker();
    await w.drain();
    await expire(p, m);

    await w.drain();

    expect(h.telegram.status(p.chatId, m.id)).toBe('creator');
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'revoked', state: 'failed', last_error: { code: 'chat_admin' } });
    expect(await targetHealth(h, p.target.target_id)).toStrictEqual({ health: 'ok', health_error: null });
  });
});
