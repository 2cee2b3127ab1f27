import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { createConfirmationJob } from '../../src/platform-jobs.js';
import { useHarness, type Harness } from '../support/harness.js';
import { checkout, connectStripe, deliverAll } from '../support/payments.js';
import { telegramProject, useTelegramWorkers, type TelegramProject } from '../support/telegram.js';
import { turnOffMessages } from '../support/front-desk.js';

/**
 * Every Telegram invite link made for a paid member reaches them once (docs/front-desk.md,
 * "Confirmations"): a paid checkout through the real app, the planner, the Telegram access worker
 * and the confirmations job as the worker runtime builds them, on real grammY and the fake Bot API.
 */

describe('Telegram: every invite link of a paid member reaches them once', () => {
  const h = useHarness();
  const workers = useTelegramWorkers(h);
  /** This test's Telegram access worker: it makes the links, and holds the bot the jobs send with. */
  let holder: AccessWorker<TelegramClient> | null = null;
  const worker = () => (holder ??= workers());
  const jobs: ConfirmationJob[] = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    holder = null;
  });
  const job = (inviteWaitMs?: number) => {
    const j = createConfirmationJob(h.container, { discord: null, telegram: worker() }, { pollMs: 60_000, ...(inviteWaitMs === undefined ? {} : { inviteWaitMs }) })!;
    jobs.push(j);
    return j;
  };
  const pass = async (j: ConfirmationJob) => {
    await worker().leases.acquire();
    j.wake();
    await j.idle();
  };

  /** A member who pressed Start and paid for the project's plan; the planner has planned their access. */
  async function paidMember(p: TelegramProject) {
    const member = h.telegram.addUser();
    h.telegram.say(member.id, Number(p.bot.id), '/start');
    const stripe = await connectStripe(h, p.t);
    const session = await checkout(p.t, p.plan.plan_id, String(member.id));
    await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
    await h.container.stores.accessPlan.planProject(p.t.projectId);
    return member;
  }
  const texts = (h: Harness, p: TelegramProject, member: { id: number }) => h.telegram.messages(Number(p.bot.id), member.id).map((m) => m.text ?? '');
  const states = async (p: TelegramProject) =>
    rowsOf<{ kind: string; state: string }>(await h.container.database.db.execute(sql`SELECT kind, state FROM notifications WHERE project_id = ${p.t.projectId} ORDER BY kind, created_at`));

  it('the link made moments after the payment goes in the confirmation, once; a fresh link after it expired goes alone', async () => {
    const p = await telegramProject(h);
    const member = await paidMember(p);
    const j = job();
    // The link is not made yet: the confirmation waits for it.
    await pass(j);
    expect(texts(h, p, member)).toStrictEqual([]);
    const w = worker();
    await w.drain();
    const [first] = h.telegram.links(p.chatId);
    await pass(j);
    await pass(j);
    expect(texts(h, p, member)).toStrictEqual([expect.stringMatching(new RegExp(`^You're in! .* Join here \\(this link is yours alone and works once\\): ${escape(first!.invite_link)} Send /status`))]);
    expect(await states(p)).toStrictEqual([
      { kind: 'confirmation', state: 'sent' },
      { kind: 'invite', state: 'dropped' },
    ]);

    // The link lapses unused; the next grant (a resync) makes a fresh one, which comes on its own.
    await h.container.database.db.execute(sql`UPDATE telegram_invites SET expires_at = now() - interval '1 minute' WHERE project_id = ${p.t.projectId}`);
    const resync = await p.t.request({ method: 'POST', url: `${p.t.base}/access/resync`, payload: { user_id: String(member.id) } });
    expect(resync.statusCode, resync.body).toBe(200);
    await w.drain();
    const fresh = h.telegram.links(p.chatId).find((l) => l.invite_link !== first!.invite_link);
    expect(fresh).toBeDefined();
    await pass(j);
    await pass(j);
    const sent = texts(h, p, member);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(new RegExp(`^Here is your invite link to Paid group: ${escape(fresh!.invite_link)} It is yours alone, works once and expires \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\. Send /status`));
    expect(sent.join('\n').split(first!.invite_link)).toHaveLength(2);
  });

  it('a link made after the confirmation went (the worker behind) comes in its own message, once, across a second job', async () => {
    const p = await telegramProject(h);
    const member = await paidMember(p);
    // No wait: the confirmation goes before any link exists.
    await pass(job(0));
    expect(texts(h, p, member)).toStrictEqual([expect.stringMatching(/^You're in! Your .* Send \/status to check it any time\.$/)]);
    await worker().drain();
    const [link] = h.telegram.links(p.chatId);
    // Two jobs of the holder pass at once: the link still goes once.
    await Promise.all([pass(job()), pass(job())]);
    const sent = texts(h, p, member);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toContain(`Here is your invite link to Paid group: ${link!.invite_link} `);
    expect(await states(p)).toStrictEqual([
      { kind: 'confirmation', state: 'sent' },
      { kind: 'invite', state: 'sent' },
    ]);
  });

  it('a member who never paid (a membership made through the API) is not messaged their link', async () => {
    const p = await telegramProject(h);
    // Welcomes are off here (a welcome carries no link either: test/storage/lifecycle-messages.test.ts).
    await turnOffMessages(p.t, 'welcome');
    const member = h.telegram.addUser();
    h.telegram.say(member.id, Number(p.bot.id), '/start');
    const res = await p.t.request({ method: 'POST', url: `${p.t.base}/memberships`, payload: { user_id: String(member.id), plan_id: p.plan.plan_id, end_date: '2099-01-01T00:00:00.000Z' } });
    expect(res.statusCode, res.body).toBe(201);
    await h.container.stores.accessPlan.planProject(p.t.projectId);
    await worker().drain();
    expect(h.telegram.links(p.chatId)).toHaveLength(1);
    await pass(job());
    expect(texts(h, p, member)).toStrictEqual([]);
    expect(await states(p)).toStrictEqual([]);
  });
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
