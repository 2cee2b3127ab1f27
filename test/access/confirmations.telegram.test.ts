import { afterEach, describe, expect, it } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { createConfirmationJob } from '../../src/platform-jobs.js';
import { createPlan, grant } from '../support/catalogue.js';
import { messageInstant, notificationRows, unreachableMembers } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { checkout, connectStripe, deliver, deliverAll, membershipOf, pick } from '../support/payments.js';
import { eventsOf, telegramProject, useTelegramWorkers } from '../support/telegram.js';
import { messagesIn, useTalkingBot } from '../support/telegram-conversation.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Confirmations on Telegram (docs/front-desk.md, "Confirmations"): a paid checkout, delivered as
 * Stripe sends it to the real app, queues one message, which the confirmations job sends through
 * the project's bot, with the paced client of the Telegram access worker holding it, on the fake Bot API; a member who blocked the bot is recorded once, with one
 * `notification.failed`, and reachable again once they talk to the bot.
 */

describe('Telegram: confirmations after a payment', () => {
  const h = useHarness();
  const workers = useTelegramWorkers(h);
  /** The Telegram access worker holding the bots in this test: the talking bot's, or one made for the job. */
  let holder: AccessWorker<TelegramClient> | null = null;
  const talking = useTalkingBot(h, () => (holder = workers()));
  const jobs: ConfirmationJob[] = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    holder = null;
  });
  /** The job as the worker runtime runs it, with the holder's clients; a Telegram plan's message does not wait for an invite here (no planner runs). */
  const job = () => {
    holder ??= workers();
    const j = createConfirmationJob(h.container, { discord: null, telegram: holder }, { pollMs: 60_000, inviteWaitMs: 0 })!;
    jobs.push(j);
    return j;
  };
  const pass = async (j: ConfirmationJob) => {
    await holder!.leases.acquire();
    j.wake();
    await j.idle();
  };

  it('a paid checkout sends one message with the plan and its end date; the redelivered Stripe event sends none', async () => {
    const p = await telegramProject(h);
    const botId = Number(p.bot.id);
    const member = h.telegram.addUser();
    h.telegram.say(member.id, botId, '/start');
    const stripe = await connectStripe(h, p.t);
    const session = await checkout(p.t, p.plan.plan_id, String(member.id));
    const events = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, events);
    const j = job();
    await pass(j);

    const [message] = await messagesIn(h, botId, member.id, 1);
    const m = await membershipOf(p.t, String(member.id));
    const until = messageInstant(m!.membership_end_date);
    expect(message!.text).toBe(`You're in! Your ${p.plan.plan_name} membership is active until ${until}. Send /status to check it any time.`);

    const again = await deliver(h, stripe, pick(events, 'checkout.session.completed'));
    expect(again.statusCode, again.body).toBe(200);
    await pass(j);
    expect(h.telegram.messages(botId, member.id)).toHaveLength(1);
    expect(await notificationRows(h, p.t.projectId)).toMatchObject([{ state: 'sent', attempts: 1, platform: 'telegram' }]);
  });

  it('a member who blocked the bot is recorded once with one notification.failed, never retried, and cleared when they talk to the bot', async () => {
    const { p, botId } = await talking();
    const member = h.telegram.addUser();
    h.telegram.say(member.id, botId, '/start');
    await messagesIn(h, botId, member.id, 1);
    h.telegram.setBlocked(member.id, botId, true);
    const stripe = await connectStripe(h, p.t);
    const j = job();
    // A second plan for the same chat: a second payment, a second confirmation to try.
    const second = await createPlan(p.t);
    await grant(p.t, second.plan_id, p.target.target_id);
    for (const plan of [p.plan, second]) {
      const session = await checkout(p.t, plan.plan_id, String(member.id));
      await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
      await pass(j);
      await pass(j);
    }
    expect(h.telegram.messages(botId, member.id)).toHaveLength(1);
    expect(await notificationRows(h, p.t.projectId)).toMatchObject([
      { state: 'unreachable', attempts: 1 },
      { state: 'unreachable', attempts: 1 },
    ]);
    expect(await unreachableMembers(h, p.t.projectId)).toStrictEqual([{ user_id: String(member.id), platform: 'telegram', reason: 'bot_blocked' }]);
    expect(await eventsOf(h, p.t.projectId, 'notification.failed')).toStrictEqual([{ user_id: String(member.id), channel: 'telegram', reason: 'bot_blocked' }]);

    h.telegram.setBlocked(member.id, botId, false);
    h.telegram.say(member.id, botId, '/status');
    await messagesIn(h, botId, member.id, 2);
    await eventually(async () => (await unreachableMembers(h, p.t.projectId)).length === 0, 'the member reachable again');
  });
});
