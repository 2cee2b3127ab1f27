import { afterEach, describe, expect, it } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { RemindersJob } from '../../src/domain/lifecycle/reminders.job.js';
import { createLogger } from '../../src/logger.js';
import { createConfirmationJob } from '../../src/platform-jobs.js';
import { createMembership } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';
import { eventsOf, telegramProject, useTelegramWorkers } from '../support/telegram.js';
import { messagesIn } from '../support/telegram-conversation.js';
import { messageInstant, turnOffMessages } from '../support/front-desk.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * Reminders before the end on Telegram (docs/lifecycle.md): the reminders job writes the reminder,
 * and the confirmations job sends it as a private message through the project's bot, with the paced
 * client of the Telegram access worker holding it, on the fake Bot API; a recurring plan's reminder
 * points to the member's billing portal.
 */

const DAY = 86_400_000;

describe('Telegram: reminders before the end', () => {
  const clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
  const h = useHarness({ clock });
  const workers = useTelegramWorkers(h);
  let holder: AccessWorker<TelegramClient> | null = null;
  const jobs: ConfirmationJob[] = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    holder = null;
  });
  const send = async () => {
    holder ??= workers();
    if (jobs.length === 0) jobs.push(createConfirmationJob(h.container, { discord: null, telegram: holder }, { pollMs: 60_000, inviteWaitMs: 0 })!);
    await holder.leases.acquire();
    jobs[0]!.wake();
    await jobs[0]!.idle();
  };
  const remind = () => new RemindersJob(h.container.stores.reminders, clock, createLogger('silent'), { intervalMs: 60_000, batchSize: 100 }).passOnce();

  it('a recurring plan: one message that it renews, with a portal link, sent late after an outage; a membership.expiring for each offset passed', async () => {
    const p = await telegramProject(h);
    // Not welcomed (the other moments' test's): the one message here is the reminder.
    await turnOffMessages(p.t, 'welcome');
    const botId = Number(p.bot.id);
    const plan = await createPlan(p.t, { plan_name: 'Gold', plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false } });
    const member = h.telegram.addUser();
    h.telegram.say(member.id, botId, '/start');
    const m = await createMembership(p.t, { userId: String(member.id), planId: plan.plan_id, endDate: new Date(clock.now().getTime() + 5 * DAY).toISOString() });
    await remind();
    clock.advance(4 * DAY + DAY / 2);
    await remind();
    await send();
    const [message] = await messagesIn(h, botId, member.id, 1);
    // Manage billing is an inline keyboard URL button to the project's portal sign-in page, which does not expire.
    expect(message!.text).toBe(`Your Gold membership renews on ${messageInstant(m.membership_end_date)}.`);
    expect(message!.reply_markup).toStrictEqual({ inline_keyboard: [[{ text: 'Manage billing', url: expect.stringMatching(new RegExp(`^https?://[^/]+/p/${p.t.projectId}/portal$`)) }]] });
    await remind();
    await send();
    expect(h.telegram.messages(botId, member.id)).toHaveLength(1);
    const events = (await eventsOf(h, p.t.projectId, 'membership.expiring')) as { offset: string; end_date: string }[];
    expect(events.map((e) => [e.offset, e.end_date])).toStrictEqual([
      ['3d', m.membership_end_date],
      ['1d', m.membership_end_date],
    ]);
  });
});
