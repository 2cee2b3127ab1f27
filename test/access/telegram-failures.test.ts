import { describe, expect, it } from 'vitest';
import { accessRows, integrationRow, targetHealth } from '../support/access-seed.js';
import { expireMembership } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { callsFrom, eventsOf, listInvites, rowOf, telegramMember, telegramProject, useTelegramWorkers, type TelegramProjectOptions } from '../support/telegram.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * What Telegram's refusals do to access rows (docs/access-telegram.md, "Telegram states and errors"): a
 * chat the bot cannot manage flags its target after one refused call, and its other rows fail
 * without one; 429 waits out retry_after, holding the chat back, and loses nothing; 5xx is retried
 * on the schedule; 401 flags the bot.
 */

describe('Telegram access: refusals', () => {
  const h = useHarness();
  const worker = useTelegramWorkers(h);

  it.each<[string, TelegramProjectOptions, RegExp, number]>([
    ['the bot is only a member', { bot: 'member' }, /^Bad Request: not enough rights to manage chat invite link: give the bot the admin right “Invite users via link”$/, 2],
    ['the bot is an admin without “Invite users via link”', { rights: { can_invite_users: false } }, /not enough rights to manage chat invite link: give the bot/, 2],
    ['the bot was removed from the chat', { bot: 'kicked' }, /^Forbidden: bot was kicked from the supergroup chat: the bot was removed from the chat: add it back/, 1],
    ['the bot is not in the chat', { bot: 'none' }, /^Forbidden: bot is not a member of the supergroup chat: the bot is not in the chat: add it/, 1],
  ])('%s: one refused call flags the target, saying what to fix; the chat’s other rows fail without a call', async (_what, options, message, callsMade) => {
    const p = await telegramProject(h, options);
    const members = [await telegramMember(h, p), await telegramMember(h, p), await telegramMember(h, p)];
    const calls = callsFrom(h.telegram, p.bot);

    await worker().drain();

    expect(calls.since()).toHaveLength(callsMade);
    expect(calls.since().filter((c) => c.status >= 400)).toHaveLength(1);
    const health = await targetHealth(h, p.target.target_id);
    expect(health.health).toBe('unhealthy');
    expect(health.health_error!.message).toMatch(message);
    for (const m of members) expect(await rowOf(h, p, m)).toMatchObject({ state: 'failed', last_error: health.health_error });
    expect(await eventsOf(h, p.t.projectId, 'access.failed')).toHaveLength(3);
    expect(h.telegram.links(p.chatId)).toStrictEqual([]);
  });

  it('a kick without “Ban users”: the target is flagged with that right to give', async () => {
    const p = await telegramProject(h, { rights: { can_restrict_members: false } });
    const m = await telegramMember(h, p, { place: 'in' });
    const w = worker();
    await w.drain();
    await expireMembership(h, m.membership.membership_id);
    await h.container.stores.accessPlan.planProject(p.t.projectId);
    const calls = callsFrom(h.telegram, p.bot);

    await w.drain();

    expect(calls.since().map((c) => [c.method, c.status])).toStrictEqual([
      ['getChatMember', 200],
      ['banChatMember', 400],
    ]);
    expect((await targetHealth(h, p.target.target_id)).health_error!.message).toMatch(/give the bot the admin right “Ban users”$/);
    expect(h.telegram.status(p.chatId, m.id)).toBe('member');
  });

  it('429 with retry_after: the chat waits that long before its next call, and every member still gets a link', async () => {
    const p = await telegramProject(h);
    const members = [await telegramMember(h, p), await telegramMember(h, p), await telegramMember(h, p)];
    h.telegram.failNext(1, { error_code: 429, description: 'Too Many Requests: retry after 2', retry_after: 2 }, 'createChatInviteLink');
    const calls = callsFrom(h.telegram, p.bot);
    const w = worker();

    await eventually(async () => {
      await w.drain();
      return (await accessRows(h, p.t.projectId)).every((r) => r.state === 'waiting_for_member');
    }, 'every member waiting with a link');

    const limited = calls.since().find((c) => c.status === 429)!;
    expect(calls.since().filter((c) => c.status !== 200)).toStrictEqual([limited]);
    // Nothing was asked of the chat during retry_after, the refused call's retry included.
    const after = calls.since().slice(calls.since().indexOf(limited) + 1);
    expect(after.length).toBeGreaterThan(0);
    for (const c of after) expect(c.at - limited.at).toBeGreaterThanOrEqual(2000);
    expect(h.telegram.links(p.chatId)).toHaveLength(3);
    for (const m of members) expect(await listInvites(p.t, m.membership.membership_id)).toHaveLength(1);
    expect(await eventsOf(h, p.t.projectId, 'access.invite-created')).toHaveLength(3);
  });

  it('a 5xx is retried on the schedule (1 s after the first failure)', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p);
    h.telegram.failNext(1, { error_code: 502, description: 'Bad Gateway' });
    const calls = callsFrom(h.telegram, p.bot);
    const w = worker();

    await w.drain();
    const row = await rowOf(h, p, m);
    expect(row).toMatchObject({ state: 'pending', attempts: 1, last_error: { code: '502', message: 'Bad Gateway' } });
    const failed = calls.since().find((c) => c.status === 502)!;
    const retryIn = Date.parse(row.next_attempt_at) - failed.at;
    expect(retryIn).toBeGreaterThanOrEqual(1000);
    expect(retryIn).toBeLessThan(1500);
    expect(await targetHealth(h, p.target.target_id)).toStrictEqual({ health: 'ok', health_error: null });

    await eventually(async () => {
      await w.drain();
      return (await rowOf(h, p, m)).state === 'waiting_for_member';
    }, 'the retry made the link');
    expect(h.telegram.links(p.chatId)).toHaveLength(1);
  });

  it('401: the token is refused; the bot is flagged, the rows wait for a reconnection, the target is fine', async () => {
    const p = await telegramProject(h);
    const members = [await telegramMember(h, p), await telegramMember(h, p)];
    h.telegram.resetToken(Number(p.bot.id));
    // A refused token names no bot on the fake: every call from here on.
    const from = h.telegram.calls.length;

    await worker().drain();

    expect(h.telegram.calls.slice(from).map((c) => [c.method, c.status])).toStrictEqual([['getChatMember', 401]]);
    const bot = await integrationRow(h, p.t.projectId, 'telegram');
    expect(bot).toMatchObject({ health: 'unhealthy', last_error: { code: 'unauthorized' } });
    expect(bot!.last_error!.message).toMatch(/@BotFather/);
    for (const m of members) expect((await rowOf(h, p, m)).state).toBe('pending');
    expect(await targetHealth(h, p.target.target_id)).toStrictEqual({ health: 'ok', health_error: null });
  });
});
