import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf, type Db } from '../../src/database/db.js';
import { NotificationsStore } from '../../src/store/notifications.store.js';
import { useAccessProcesses } from '../support/access-processes.js';
import { startFakeTelegram } from '../support/fake-telegram.js';
import { onPostgres } from '../support/harness.js';
import { fakeLinks, telegramProcesses } from '../support/telegram-processes.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * A crash between a payment and the member's invite (docs/front-desk.md, "Confirmations"), with
 * real processes (`npx tenure worker`, the built CLI) and grammY against the fake Bot API in this
 * process. Payments are committed as the payment's transaction commits them (the membership, the
 * payment, the queued confirmation); a worker starts making the members' links and is killed with
 * SIGKILL while Telegram is making the first one (the fake has made it; the worker never hears of
 * it), before anything was sent to anyone. Started again, it makes each member a link of its own,
 * and every member gets one confirmation carrying their recorded link, exactly once; the link the
 * dead worker asked for is never sent.
 */

const MEMBERS = 3;
/** Every answer of the fake waits this long: the kill lands while the first link's answer is on its way. */
const LATENCY_MS = 1_500;

describe(`confirmations across a crash (${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  const p = useAccessProcesses();
  const { fakes, startWorker, stop, logs, leaseOwner, withDatabase } = p;

  it('kill -9 between the payment and the invite: after the restart each member gets the confirmation with their link once', { timeout: 180_000 }, async () => {
    // The fake reads its options at each answer: slow while the first worker runs, prompt after the kill.
    const options = { globalPerSecond: 10_000, chatPerSecond: 10_000, latencyMs: LATENCY_MS };
    const fake = await startFakeTelegram(options);
    fakes.push(fake);
    const tg = telegramProcesses(p, fake);
    const w = await tg.world(MEMBERS, 1);
    const botId = Number(w.bot.id);
    const members = w.chats[0]!.members;
    await tg.withApi(w, async (_t, c) => {
      for (const [i, userId] of members.entries()) {
        await c.database.db.transaction(async (tx) => {
          await tx.execute(sql`
            INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status)
            SELECT ${w.projectId}, 'stripe', ${`pi_crash_${i}`}, ${userId}, plan_id, 1000, 'usd', 'succeeded'
            FROM memberships WHERE project_id = ${w.projectId} AND user_id = ${userId}`);
          const planId = rowsOf<{ plan_id: string }>(await tx.execute(sql`SELECT plan_id FROM memberships WHERE project_id = ${w.projectId} AND user_id = ${userId}`))[0]!.plan_id;
          const queued = await new NotificationsStore(tx as unknown as Db).queueConfirmation({ projectId: w.projectId, userId, planId, paymentKey: `pi_crash_${i}` }, new Date());
          expect(queued).toBe(true);
        });
      }
    });
    // Each member opened the bot's chat (a bot cannot write first).
    for (const m of members) fake.say(Number(m), botId, '/start');
    const workerEnv = { TENURE_TELEGRAM_API_URL: fake.url, TENURE_TELEGRAM_PER_SECOND: '10000', TENURE_TELEGRAM_CHAT_PER_SECOND: '10000' };
    const told = (userId: string) => fake.messages(botId, Number(userId)).map((m) => m.text).filter((t) => /^(You're in!|Here is your invite link)/.test(t));

    const first = startWorker(workerEnv);
    await eventually(() => fake.calls.some((c) => c.method === 'createChatInviteLink' && c.status === 200), `the first link is being made\n${logs()}`, 60_000);
    await stop(first, 'SIGKILL');
    options.latencyMs = 0;
    const [inFlight, ...more] = fakeLinks(fake, w);
    expect(more).toStrictEqual([]);
    expect(members.flatMap(told)).toStrictEqual([]);

    // PostgreSQL: the restarted worker takes the bot once the dead one's lease has run out; PGlite:
    // once the dead process's DATA_DIR lock is stale (2 s here).
    if (onPostgres) await eventually(async () => (await leaseOwner(w.projectId)) === null, "the dead worker's lease runs out", 10_000);
    else await sleep(2_500);
    const second = startWorker(workerEnv);
    await eventually(() => members.every((m) => told(m).length > 0), `every member is told\n${logs()}`, 90_000);
    await stop(second, 'SIGTERM');
    expect(second.exitCode, logs()).toBe(0);

    const { invites, notifications } = await withDatabase(async (database) => ({
      invites: rowsOf<{ user_id: string; invite_link: string }>(
        await database.db.execute(sql`SELECT user_id, invite_link FROM telegram_invites WHERE project_id = ${w.projectId} AND revoked_at IS NULL`),
      ),
      notifications: rowsOf<{ kind: string; state: string }>(
        await database.db.execute(sql`SELECT kind, state FROM notifications WHERE project_id = ${w.projectId} ORDER BY kind, state`),
      ),
    }));
    // One recorded link per member (the in-flight one never was), each carried by their confirmation, once.
    expect(invites).toHaveLength(MEMBERS);
    expect(invites.map((i) => i.invite_link)).not.toContain(inFlight!.invite_link);
    for (const m of members) {
      const link = invites.find((i) => i.user_id === m)!.invite_link;
      expect(told(m), m).toStrictEqual([expect.stringMatching(new RegExp(`^You're in! .* Join here \\(this link is yours alone and works once\\): ${escape(link)} Send /status`))]);
    }
    expect(notifications).toStrictEqual([
      ...members.map(() => ({ kind: 'confirmation', state: 'sent' })),
      ...members.map(() => ({ kind: 'invite', state: 'dropped' })),
    ]);
  });
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
