import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { REST } from '@discordjs/rest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { createAccessWorker, createConfirmationJob } from '../../src/platform-jobs.js';
import { snowflake } from '../support/catalogue.js';
import { command, frontDeskGuild, postInteraction } from '../support/discord-interactions.js';
import { messageInstant, notificationRows, unreachableMembers } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { checkout, connectStripe, deliver, deliverAll, membershipOf, pick } from '../support/payments.js';
import { eventsOf } from '../support/telegram.js';

/**
 * Confirmations on Discord (docs/front-desk.md, "Confirmations"): a paid checkout delivered to the
 * real app queues one DM, which the confirmations job sends through the project's bot, with the
 * REST client of the Discord access worker holding it, on the fake Discord (Create DM, then Create
 * Message); a member whose DMs are closed (403 50007) is recorded
 * once with one `notification.failed`, never retried, and reachable again after an interaction.
 */

describe('Discord: confirmations after a payment', () => {
  const h = useHarness();
  const jobs: ConfirmationJob[] = [];
  let holder: AccessWorker<REST> | null = null;
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    await holder?.stop(0);
    holder = null;
  });
  /** The job as the worker runtime builds it, with this test's Discord access worker (not started: the test takes the bots). */
  const job = () => {
    holder ??= createAccessWorker(h.container)!;
    const j = createConfirmationJob(h.container, { discord: holder, telegram: null }, { pollMs: 60_000 })!;
    jobs.push(j);
    return j;
  };
  /** The worker takes the connected bots (the gateway is on: every one), then the job sends what is due. */
  const pass = async (j: ConfirmationJob) => {
    await holder!.leases.acquire();
    j.wake();
    await j.idle();
  };

  it('a paid checkout sends one DM with the plan and its end date; the redelivered Stripe event sends none', async () => {
    const g = await frontDeskGuild(h, 'Gold');
    const member = snowflake();
    const stripe = await connectStripe(h, g.t);
    const session = await checkout(g.t, g.planId, member);
    const events = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, events);
    const j = job();
    await pass(j);

    const m = await membershipOf(g.t, member);
    const until = messageInstant(m!.membership_end_date);
    expect(h.discord.dms(g.bot.id, member)).toStrictEqual([`You're in! Your Gold membership is active until ${until}. Use /memberships to check it any time.`]);

    expect((await deliver(h, stripe, pick(events, 'checkout.session.completed'))).statusCode).toBe(200);
    await pass(j);
    expect(h.discord.dms(g.bot.id, member)).toHaveLength(1);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'sent', attempts: 1, platform: 'discord' }]);
  });

  it('closed DMs (50007) are recorded once with one notification.failed, never retried, and cleared by an interaction of the member', async () => {
    const g = await frontDeskGuild(h, 'Gold');
    const member = snowflake();
    h.discord.setDmsClosed(g.bot.id, member, true);
    const stripe = await connectStripe(h, g.t);
    const j = job();
    const session = await checkout(g.t, g.planId, member);
    await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
    await pass(j);
    await pass(j);
    const messages = () => h.discord.calls.filter((c) => c.botId === g.bot.id && c.route === '/channels/{channel.id}/messages').length;
    expect(messages()).toBe(1);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'unreachable', attempts: 1 }]);
    expect(await unreachableMembers(h, g.t.projectId)).toStrictEqual([{ user_id: member, platform: 'discord', reason: 'dm_closed' }]);
    expect(await eventsOf(h, g.t.projectId, 'notification.failed')).toStrictEqual([{ user_id: member, channel: 'discord', reason: 'dm_closed' }]);

    const res = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, command('memberships', g.guildId, member)));
    expect(res.statusCode, res.body).toBe(200);
    expect(await unreachableMembers(h, g.t.projectId)).toStrictEqual([]);
  });

  it('a 5xx is retried after a pause, not at once, and the DM then goes', async () => {
    const g = await frontDeskGuild(h, 'Gold');
    const member = snowflake();
    const stripe = await connectStripe(h, g.t);
    const session = await checkout(g.t, g.planId, member);
    await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
    h.discord.failNext(1, 502);
    const j = job();
    await pass(j);
    await pass(j);
    expect(h.discord.dms(g.bot.id, member)).toStrictEqual([]);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'pending', attempts: 1 }]);
    await h.container.database.db.execute(sql`UPDATE notifications SET next_attempt_at = now() WHERE project_id = ${g.t.projectId}`);
    await pass(j);
    expect(h.discord.dms(g.bot.id, member)).toHaveLength(1);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'sent', attempts: 2 }]);
  });
});
