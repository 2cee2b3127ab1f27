import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import type { TelegramProjectReport, TelegramReconcilerOptions } from '../../src/access/telegram/telegram.reconciler.js';
import { rowsOf } from '../../src/database/db.js';
import { createTelegramReconciler } from '../../src/platform-jobs.js';
import { startWorkerRuntime } from '../../src/worker-runtime.js';
import { targetHealth } from '../support/access-seed.js';
import type { FakeCall } from '../support/fake-telegram.js';
import { useHarness } from '../support/harness.js';
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
import { eventually } from '../support/webhook-harness.js';

/**
 * Telegram drift repair (docs/access-discord.md "Drift repair") through the real app: the Telegram access
 * worker as the worker runtime builds it (drained), drift repair on that worker's bots and paced
 * clients (createTelegramReconciler), grammY against the harness's fake Bot API. No update is
 * received here (the updates poller is not running), so every change made behind tenure's back (a
 * join, a leave, an admin's hand) is one whose update was missed. Each case checks that the
 * comparison itself only asks (getChatMember, about managed members only) and marks rows, and that
 * the worker then makes the repair's calls.
 */

/** The app's clock runs `skew` ms ahead of the wall clock: links expire and retry_after passes without waiting. */
let skew = 0;
const TTL_S = 60;

const h = useHarness({
  clock: { now: () => new Date(Date.now() + skew) },
  // The shortest link lifetime; leases long enough to outlast a skewed clock.
  env: { TENURE_TELEGRAM_INVITE_TTL_SECONDS: String(TTL_S), TENURE_ACCESS_LEASE_SECONDS: '600' },
});
const worker = useTelegramWorkers(h);
beforeEach(() => {
  skew = 0;
});

interface World {
  p: TelegramProject;
  w: AccessWorker<TelegramClient>;
  compare(): Promise<{ report: TelegramProjectReport | undefined; calls: FakeCall[] }>;
}

/** A project managing one supergroup, its Telegram worker, and a drift repair on that worker comparing whenever asked. */
async function world(o: Partial<TelegramReconcilerOptions> = {}): Promise<World> {
  const p = await telegramProject(h);
  const w = worker();
  const reconciler = createTelegramReconciler(h.container, w, { everyMs: 0, tickMs: 60_000, ...o });
  return {
    p,
    w,
    /** One pass of drift repair (the worker holding the bot first, as its loop would), and the calls the pass made. */
    async compare() {
      await w.drain();
      const calls = callsFrom(h.telegram, p.bot);
      const reports = await reconciler.runOnce();
      return { report: reports.find((r) => r.projectId === p.t.projectId), calls: calls.since() };
    },
  };
}

/** The worker's calls until it has nothing left to do. */
async function drained(x: World): Promise<[string, number][]> {
  const calls = callsFrom(h.telegram, x.p.bot);
  await x.w.drain();
  return calls.since().map((c) => [c.method, c.status]);
}

const asked = (calls: FakeCall[]) => calls.map((c) => [c.method, c.params.chat_id, c.params.user_id, c.status]);
const question = (x: World, m: TelegramMember, status = 200) => ['getChatMember', x.p.chatId, m.id, status];

async function endMembership(x: World, m: TelegramMember): Promise<void> {
  const res = await x.p.t.request({ method: 'DELETE', url: `${x.p.t.base}/memberships/${m.membership.membership_id}` });
  expect(res.statusCode, res.body).toBe(204);
  await h.container.stores.accessPlan.planProject(x.p.t.projectId);
}

const reconciledAt = async (x: World) =>
  rowsOf<{ at: string | null }>(
    await h.database.db.execute(sql`SELECT reconciled_at AS at FROM integrations WHERE project_id = ${x.p.t.projectId} AND platform = 'telegram'`),
  )[0]!.at;

const none = { remove: 0, joined: 0, left: 0, relink: 0 };

describe('Telegram drift repair', () => {
  it('removes a member whose access ended and who is back in the chat: the comparison marks the row, the worker removes them', async () => {
    const x = await world();
    const m = await telegramMember(h, x.p, { place: 'in' });
    await x.w.drain();
    await endMembership(x, m);
    expect(await drained(x)).toStrictEqual([
      ['getChatMember', 200],
      ['banChatMember', 200],
      ['unbanChatMember', 200],
    ]);
    expect(h.telegram.status(x.p.chatId, m.id)).toBe('left');

    // An admin of the chat lets them back in.
    h.telegram.addMember(x.p.chatId, m.id);
    const { report, calls } = await x.compare();

    expect(asked(calls)).toStrictEqual([question(x, m)]);
    expect(report).toMatchObject({ completed: true, chats: [{ chatId: String(x.p.chatId), asked: 1, repairs: { ...none, remove: 1 } }] });
    // Only marked: still inside until the worker's call.
    expect(h.telegram.status(x.p.chatId, m.id)).toBe('member');
    expect(await rowOf(h, x.p, m)).toMatchObject({ desired: 'revoked', applied: 'granted', state: 'pending', attempts: 0 });

    expect(await drained(x)).toStrictEqual([
      ['getChatMember', 200],
      ['banChatMember', 200],
      ['unbanChatMember', 200],
    ]);
    expect(h.telegram.status(x.p.chatId, m.id)).toBe('left');
    expect(await rowOf(h, x.p, m)).toMatchObject({ desired: 'revoked', applied: 'revoked', state: 'synced' });
    // The worker announces the removal, as for any revoke: once for the end, once for the repair.
    expect(await eventsOf(h, x.p.t.projectId, 'access.revoked')).toHaveLength(2);
  });

  it('syncs a member who joined with their link while the update was missed, and announces access.granted', async () => {
    const x = await world();
    const m = await telegramMember(h, x.p);
    await x.w.drain();
    const [invite] = await listInvites(x.p.t, m.membership.membership_id);
    expect(h.telegram.join(m.id, invite!.invite_link)).toStrictEqual({ result: 'joined' });
    expect(await rowOf(h, x.p, m)).toMatchObject({ state: 'waiting_for_member' });

    const { report, calls } = await x.compare();

    expect(asked(calls)).toStrictEqual([question(x, m)]);
    expect(report?.chats[0]?.repairs).toStrictEqual({ ...none, joined: 1 });
    expect(await rowOf(h, x.p, m)).toMatchObject({ desired: 'granted', applied: 'granted', state: 'synced', last_error: null });
    expect(await eventsOf(h, x.p.t.projectId, 'access.granted')).toStrictEqual([{ user_id: m.userId, target_id: x.p.target.target_id, platform: 'telegram' }]);
    // Nothing left for the worker.
    expect(await drained(x)).toStrictEqual([]);
  });

  it('gives an active member who left a fresh link: the comparison marks the row, the worker makes the link', async () => {
    const x = await world();
    const m = await telegramMember(h, x.p, { place: 'in' });
    await x.w.drain();
    expect(await rowOf(h, x.p, m)).toMatchObject({ state: 'synced' });
    h.telegram.leave(x.p.chatId, m.id);

    const { report, calls } = await x.compare();

    expect(asked(calls)).toStrictEqual([question(x, m)]);
    expect(report?.chats[0]?.repairs).toStrictEqual({ ...none, left: 1 });
    expect(await rowOf(h, x.p, m)).toMatchObject({ desired: 'granted', applied: 'revoked', state: 'pending' });
    expect(h.telegram.links(x.p.chatId)).toStrictEqual([]);

    expect(await drained(x)).toStrictEqual([
      ['getChatMember', 200],
      ['createChatInviteLink', 200],
    ]);
    const invites = await listInvites(x.p.t, m.membership.membership_id);
    expect(invites).toHaveLength(1);
    expect(await eventsOf(h, x.p.t.projectId, 'access.invite-created')).toHaveLength(1);
    expect(await rowOf(h, x.p, m)).toMatchObject({ state: 'waiting_for_member' });
    expect(h.telegram.join(m.id, invites[0]!.invite_link)).toStrictEqual({ result: 'joined' });
  });

  it('gives a waiting member whose link expired a fresh one, and leaves a member whose link is current', async () => {
    const x = await world();
    const late = await telegramMember(h, x.p);
    await x.w.drain();
    const [old] = await listInvites(x.p.t, late.membership.membership_id);
    skew += (TTL_S + 1) * 1000;
    const recent = await telegramMember(h, x.p);
    await x.w.drain();
    expect(await listInvites(x.p.t, late.membership.membership_id)).toStrictEqual([]);
    expect(await listInvites(x.p.t, recent.membership.membership_id)).toHaveLength(1);

    const { report, calls } = await x.compare();

    expect(asked(calls).sort()).toStrictEqual([question(x, late), question(x, recent)].sort());
    expect(report?.chats[0]?.repairs).toStrictEqual({ ...none, relink: 1 });
    expect(await rowOf(h, x.p, late)).toMatchObject({ desired: 'granted', applied: 'revoked', state: 'pending' });
    expect(await rowOf(h, x.p, recent)).toMatchObject({ state: 'waiting_for_member' });

    expect(await drained(x)).toStrictEqual([
      ['getChatMember', 200],
      ['createChatInviteLink', 200],
    ]);
    const [fresh] = await listInvites(x.p.t, late.membership.membership_id);
    expect(fresh!.invite_link).not.toBe(old!.invite_link);
    expect(await rowOf(h, x.p, late)).toMatchObject({ state: 'waiting_for_member' });
  });

  it('asks only about the members tenure manages, page by page; when nothing differs it repairs nothing and the worker calls nothing', async () => {
    const x = await world({ pageSize: 2 });
    const members = [await telegramMember(h, x.p, { place: 'in' }), await telegramMember(h, x.p, { place: 'in' }), await telegramMember(h, x.p, { place: 'in' })];
    // People in the chat tenure knows nothing of.
    const strangers = [h.telegram.addUser(), h.telegram.addUser()];
    for (const s of strangers) h.telegram.addMember(x.p.chatId, s.id);
    await x.w.drain();

    const { report, calls } = await x.compare();

    expect(asked(calls).sort()).toStrictEqual(members.map((m) => question(x, m)).sort());
    expect(report).toMatchObject({ completed: true, chats: [{ asked: 3, pages: 2, repairs: none }] });
    for (const s of strangers) {
      expect(h.telegram.calls.filter((c) => c.params.user_id === s.id)).toStrictEqual([]);
      expect(h.telegram.status(x.p.chatId, s.id)).toBe('member');
    }
    expect(await reconciledAt(x)).not.toBeNull();
    expect(await drained(x)).toStrictEqual([]);
  });

  it('flags the target of a chat the bot cannot see, leaves its rows, and clears the flag once the chat answers again', async () => {
    const x = await world();
    const m = await telegramMember(h, x.p, { place: 'in' });
    await x.w.drain();
    h.telegram.setBot(x.p.chatId, Number(x.p.bot.id), 'kicked');

    const { report, calls } = await x.compare();

    const kicked = { code: '403', message: 'Forbidden: bot was kicked from the supergroup chat' };
    expect(asked(calls)).toStrictEqual([question(x, m, 403)]);
    expect(report).toMatchObject({ completed: true, chats: [{ error: kicked, repairs: none }] });
    expect(await targetHealth(h, x.p.target.target_id)).toStrictEqual({ health: 'unhealthy', health_error: kicked });
    const shown = await x.p.t.request({ method: 'GET', url: `${x.p.t.base}/targets/${x.p.target.target_id}` });
    expect(shown.json().data[0], shown.body).toMatchObject({ health: 'unhealthy', health_error: kicked });
    expect(await rowOf(h, x.p, m)).toMatchObject({ desired: 'granted', applied: 'granted', state: 'synced' });
    expect(await drained(x)).toStrictEqual([]);

    h.telegram.setBot(x.p.chatId, Number(x.p.bot.id), 'admin');
    await x.compare();
    expect(await targetHealth(h, x.p.target.target_id)).toStrictEqual({ health: 'ok', health_error: null });
  });

  it('stops asking when the bot is let go, and writes nothing of the page it was asking', async () => {
    // One question at a time at the client's pace (TENURE_TELEGRAM_CHAT_PER_SECOND, 5): ten take two seconds.
    const x = await world({ atOnce: 1 });
    const members: TelegramMember[] = [];
    for (let i = 0; i < 10; i++) members.push(await telegramMember(h, x.p, { place: 'in' }));
    await x.w.drain();
    for (const m of members) h.telegram.leave(x.p.chatId, m.id);

    const calls = callsFrom(h.telegram, x.p.bot);
    const pass = x.compare();
    await expect.poll(() => calls.since().length, { timeout: 5_000, interval: 20 }).toBeGreaterThan(0);
    await x.w.leases.release([x.p.t.projectId]);
    const { report } = await pass;

    expect(report).toMatchObject({ completed: false });
    expect(calls.since().length).toBeLessThan(members.length);
    expect(await reconciledAt(x)).toBeNull();
    for (const m of members) expect(await rowOf(h, x.p, m)).toMatchObject({ state: 'synced', applied: 'granted' });
  });

  it("stops the bot's pass on a 429 and compares again once retry_after has passed", async () => {
    const x = await world({ atOnce: 1 });
    const [stays, leaves] = [await telegramMember(h, x.p, { place: 'in' }), await telegramMember(h, x.p, { place: 'in' })];
    await x.w.drain();
    h.telegram.leave(x.p.chatId, leaves.id);
    h.telegram.failNext(1, { error_code: 429, description: 'Too Many Requests: retry after 7', retry_after: 7 }, 'getChatMember');

    const first = await x.compare();
    expect(first.calls.map((c) => [c.method, c.status])).toStrictEqual([['getChatMember', 429]]);
    expect(first.report).toMatchObject({ completed: false, retryAfterMs: 7_000, stoppedBy: { code: '429' } });
    expect(await reconciledAt(x)).toBeNull();

    // Within retry_after: not asked again.
    skew += 6_000;
    const early = await x.compare();
    expect(early).toStrictEqual({ report: undefined, calls: [] });

    skew += 1_500;
    const again = await x.compare();
    expect(asked(again.calls).sort()).toStrictEqual([question(x, stays), question(x, leaves)].sort());
    expect(again.report).toMatchObject({ completed: true, chats: [{ repairs: { ...none, left: 1 } }] });
    expect(await rowOf(h, x.p, leaves)).toMatchObject({ state: 'pending', applied: 'revoked' });
    expect(await reconciledAt(x)).not.toBeNull();
  });

  it('runs in the worker runtime: a Telegram bot it takes is compared at once, and the worker there makes the repair', { timeout: 90_000 }, async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p, { place: 'in' });
    const w = worker();
    await w.drain();
    expect(await rowOf(h, p, m)).toMatchObject({ state: 'synced' });
    // Its lease given back; the member leaves while nobody holds the bot.
    await w.stop(0);
    h.telegram.leave(p.chatId, m.id);

    const runtime = await startWorkerRuntime(h.container, { pollMs: 200 });
    try {
      // A whole runtime starting on a shared machine: a generous bound, not a timing claim.
      await eventually(async () => (await listInvites(p.t, m.membership.membership_id)).length === 1, 'a fresh link', 60_000);
    } finally {
      await runtime.stop();
    }
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'granted', state: 'waiting_for_member' });
  });
});
