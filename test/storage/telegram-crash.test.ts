import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useAccessProcesses } from '../support/access-processes.js';
import { startFakeTelegram, type FakeCall, type FakeInviteLink } from '../support/fake-telegram.js';
import { onPostgres } from '../support/harness.js';
import { fakeLinks, handedOut, recordedIn, telegramProcesses, userOfLink, type Recorded } from '../support/telegram-processes.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * The Telegram access worker across a crash, with real processes (`npx tenure worker`, the built
 * CLI) and grammY against the local fake Bot API, which runs in this process. A burst of grants to
 * members spread over a few supergroups (a grant there is a single-use link made for that member
 * alone); the worker is killed with SIGKILL mid-burst, once some links exist, and started again
 * (PostgreSQL: once the dead one's lease on the bot has run out; embedded storage: taking over its
 * stale DATA_DIR lock). Nothing is lost, and nothing anyone sees is made twice: every member waits
 * with exactly one recorded link, announced by exactly one `access.invite-created` event, open and
 * single-use on the fake; the only links tenure did not record are those the dead process had
 * asked for and not yet written, and nobody is handed one. Then the members all expire at once and
 * every recorded link is revoked. The same kill with Discord's role grants: access-crash.test.ts.
 */

/** A hundred-odd members: the burst takes seconds, so the kill lands in it (at a quarter, asserted below). */
const MEMBERS = 120;
/** Supergroups of the bot: the engine makes one call per target at a time, so this many run side by side. */
const CHATS = 3;

describe(`Telegram access worker across a crash (${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  const p = useAccessProcesses();
  const { fakes, startWorker, stop, logs, leaseOwner } = p;

  it('kill -9 mid-burst: one recorded, announced, single-use link per member, none unrecorded handed out; expiry revokes them all', { timeout: 180_000 }, async () => {
    // Fast limits: this case is about what a crash leaves, not about flood limits (telegram-failures.test.ts).
    const fake = await startFakeTelegram({ globalPerSecond: 10_000, chatPerSecond: 10_000, latencyMs: 2 });
    fakes.push(fake);
    const tg = telegramProcesses(p, fake);
    const w = await tg.world(MEMBERS, CHATS);
    expect(countStates(w.connected)).toStrictEqual({ pending: MEMBERS });
    const workerEnv = { TENURE_TELEGRAM_API_URL: fake.url, TENURE_TELEGRAM_PER_SECOND: '10000', TENURE_TELEGRAM_CHAT_PER_SECOND: '10000' };

    const first = startWorker(workerEnv);
    const byFirst = watchCalls(fake.calls, 0);
    await eventually(() => byFirst().links >= MEMBERS / 4, `a quarter of the links are made\n${logs()}`, 60_000);
    await stop(first, 'SIGKILL');

    // PostgreSQL: the restarted worker takes the bot once the dead one's lease has run out, and a
    // statement the dead process had sent has committed by then. PGlite: the rows are read once the
    // dead process's DATA_DIR lock is stale (2 s here), as the restarted worker takes it over.
    if (onPostgres) await eventually(async () => (await leaseOwner(w.projectId)) === null, "the dead worker's lease runs out", 10_000);
    else await sleep(2_500);
    // What the dead worker left: the links it made (all of them: it makes no more), what it recorded.
    const linksAtKill = fakeLinks(fake, w);
    const atKill = await tg.recorded(w.projectId);
    const recordedAtKill = new Set(atKill.invites.map((i) => i.invite_link));
    const unrecordedAtKill = linksAtKill.filter((l) => !recordedAtKill.has(l.invite_link)).map((l) => l.invite_link);
    const openAtKill = atKill.rows.filter((r) => r.state !== 'waiting_for_member').map((r) => r.user_id);
    expect(openAtKill.length, 'the kill came mid-burst').toBeGreaterThan(0);
    const needLink = MEMBERS - new Set(atKill.invites.map((i) => i.user_id)).size;

    const bySecond = watchCalls(fake.calls, Date.now());
    const second = startWorker(workerEnv);
    // Done when every row the dead worker left open has been looked at again and every member
    // without a recorded link has one; the graceful stop lets the calls still out finish and be written.
    await eventually(
      () => includesAll(bySecond().asked, openAtKill) && bySecond().links >= needLink,
      `the restarted worker gives every member a link\n${logs()}`,
      60_000,
    );
    await stop(second, 'SIGTERM');
    expect(second.exitCode, logs()).toBe(0);

    // Read in one opening of the storage: what was recorded, what each member is handed, and the
    // burst the other way started (one bulk extend to a moment away: the expiry sweep then ends them all).
    let endsAt = 0;
    const { granted, handed, extended } = await tg.withApi(w, async (t, c) => {
      const state = await recordedIn(c.database, w.projectId);
      const invites = await handedOut(t, w);
      endsAt = Date.now() + 1_500;
      const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/extend`, payload: { extend: endsAt } });
      return { granted: state, handed: invites, extended: res };
    });
    expect(extended.statusCode, extended.body).toBe(200);
    expect(extended.json().total).toBe(MEMBERS);

    // Every member waits, with exactly one link recorded for them, current, announced once.
    expect(countStates(granted)).toStrictEqual({ waiting_for_member: MEMBERS });
    expect(granted.rows.every((r) => r.desired === 'granted' && r.error_code === 'invite_sent')).toBe(true);
    const recorded = granted.invites;
    expect(recorded).toHaveLength(MEMBERS);
    expect(new Set(recorded.map((i) => i.user_id)).size).toBe(MEMBERS);
    const chatOf = new Map(w.chats.flatMap((c) => c.members.map((m) => [m, c] as const)));
    for (const i of recorded) {
      const chat = chatOf.get(i.user_id)!;
      expect({ current: i.current, target: i.target_id, chat: i.chat_id, membership: i.membership_id, bot: i.bot_id }, i.invite_link).toStrictEqual({
        current: true,
        target: chat.targetId,
        chat: String(chat.chatId),
        membership: w.memberships.get(i.user_id),
        bot: w.bot.id,
      });
    }
    expect(granted.announced.toSorted()).toStrictEqual(recorded.map((i) => i.invite_link).toSorted());

    // Every recorded link is on the fake: the bot's, in the member's chat, for that member, single-use, unused, open.
    const onFake = new Map(fakeLinks(fake, w).map((l) => [l.invite_link, l]));
    for (const i of recorded) {
      expect(onFake.has(i.invite_link), i.invite_link).toBe(true);
      expect(linkFacts(onFake.get(i.invite_link)!)).toStrictEqual({ chat: i.chat_id, creator: w.bot.id, user: i.user_id, member_limit: 1, revoked: false, uses: 0, expires: true });
    }

    // Links tenure did not record are exactly those the dead worker had made and not written: the
    // restarted one recorded every link it made. The bound: the engine makes one call (one row's
    // calls) per target at a time, each chat here is one target, and a grant makes at most one link
    // before recording it, so at most one link per chat can have been out when the process died.
    // TENURE_TELEGRAM_CHAT_PER_SECOND does not enter into it: it spaces calls a chat makes one after
    // another, never puts two at once (measured: 1 or 2 unrecorded links per run, of 3 chats).
    const recordedLinks = new Set(recorded.map((i) => i.invite_link));
    const unrecorded = [...onFake.values()].filter((l) => !recordedLinks.has(l.invite_link));
    expect(unrecorded.map((l) => l.invite_link).toSorted()).toStrictEqual(unrecordedAtKill.toSorted());
    for (const c of w.chats) expect(unrecorded.filter((l) => l.chat_id === c.chatId).length, `unrecorded links in chat ${c.chatId}`).toBeLessThanOrEqual(1);
    // Their members got a link of their own after the restart; nobody else has two.
    const linksPerMember = countBy([...onFake.values()], (l) => userOfLink(l) ?? '?');
    expect([...linksPerMember].filter(([, n]) => n !== 1).map(([u, n]) => `${u}:${n}`).toSorted()).toStrictEqual(
      unrecorded.map((l) => `${userOfLink(l)}:2`).toSorted(),
    );
    // And nobody is handed one: each member's invites are their one recorded link.
    const recordedOf = new Map(recorded.map((i) => [i.user_id, i.invite_link]));
    expect(handed.size).toBe(MEMBERS);
    for (const [user, invites] of handed) expect(invites.map((v) => v.invite_link), user).toStrictEqual([recordedOf.get(user)]);

    // The other way: once the memberships have ended, a worker started again has the sweep expire
    // them, revokes every recorded link and finds each member outside (the kick's getChatMember).
    await sleep(Math.max(0, endsAt - Date.now()));
    const byThird = watchCalls(fake.calls, Date.now());
    const third = startWorker(workerEnv);
    await eventually(
      () => includesAll(byThird().revoked, recordedLinks) && includesAll(byThird().asked, w.memberships.keys()),
      `every recorded link is revoked\n${logs()}`,
      60_000,
    );
    await stop(third, 'SIGTERM');
    expect(third.exitCode, logs()).toBe(0);

    const revoked = await tg.recorded(w.projectId);
    expect(countStates(revoked)).toStrictEqual({ synced: MEMBERS });
    expect(revoked.rows.every((r) => r.desired === 'revoked')).toBe(true);
    expect(revoked.invites.filter((i) => !i.revoked).map((i) => i.invite_link)).toStrictEqual([]);
    const afterRevoke = new Map(fakeLinks(fake, w).map((l) => [l.invite_link, l]));
    expect([...recordedLinks].filter((l) => !afterRevoke.get(l)?.is_revoked)).toStrictEqual([]);
    // The unrecorded links stay open until their expire_date: tenure never learnt them, and the Bot
    // API cannot list a chat's links. Nobody was handed one (above).
    expect(fake.calls.filter((c) => c.status === 429)).toHaveLength(0);
  });
});

/**
 * The fake's answered calls that arrived from `since` on, read as they come: each look reads only
 * the calls answered since the last, so polling it every few milliseconds costs the fake (in this
 * process) next to nothing.
 */
function watchCalls(calls: readonly FakeCall[], since: number): () => { asked: Set<string>; links: number; revoked: Set<string> } {
  const seen = { asked: new Set<string>(), links: 0, revoked: new Set<string>() };
  let read = 0;
  return () => {
    for (; read < calls.length; read++) {
      const c = calls[read]!;
      if (c.at < since || c.status !== 200) continue;
      if (c.method === 'getChatMember') seen.asked.add(String(c.params.user_id));
      else if (c.method === 'createChatInviteLink') seen.links++;
      else if (c.method === 'revokeChatInviteLink') seen.revoked.add(String(c.params.invite_link));
    }
    return seen;
  };
}

const includesAll = (set: ReadonlySet<string>, items: Iterable<string>): boolean => [...items].every((i) => set.has(i));

/** What the test checks of a link on the fake. */
function linkFacts(l: FakeInviteLink) {
  return {
    chat: String(l.chat_id),
    creator: String(l.creator_id),
    user: userOfLink(l),
    member_limit: l.member_limit,
    revoked: l.is_revoked,
    uses: l.uses.length,
    expires: (l.expire_date ?? 0) > Date.now() / 1000,
  };
}

function countStates(recorded: Pick<Recorded, 'rows'>): Record<string, number> {
  return Object.fromEntries(countBy(recorded.rows, (r) => r.state));
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
