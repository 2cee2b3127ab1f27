import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createPlan, grant, snowflake } from '../support/catalogue.js';
import { command, frontDeskGuild, postInteraction } from '../support/discord-interactions.js';
import { messageInstant, notificationRows, turnOffMessages, unreachableMembers, useDiscordSender } from '../support/front-desk.js';
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
  /** A pass of the confirmations job as a worker builds it: the bots taken (the gateway is on: every one), then what is due sent. */
  const send = useDiscordSender(h);

  it('a paid checkout sends one DM with the plan and its end date; the redelivered Stripe event sends none', async () => {
    const g = await frontDeskGuild(h, 'Gold');
    const member = snowflake();
    const stripe = await connectStripe(h, g.t);
    const session = await checkout(g.t, g.planId, member);
    const events = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, events);
    await send();

    const m = await membershipOf(g.t, member);
    const until = messageInstant(m!.membership_end_date);
    expect(h.discord.dms(g.bot.id, member)).toStrictEqual([`You're in! Your Gold membership is active until ${until}. Use /memberships to check it any time.`]);

    expect((await deliver(h, stripe, pick(events, 'checkout.session.completed'))).statusCode).toBe(200);
    await send();
    expect(h.discord.dms(g.bot.id, member)).toHaveLength(1);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'sent', attempts: 1, platform: 'discord' }]);
  });

  it('closed DMs (50007) are recorded once with one notification.failed, never retried, and cleared by an interaction of the member', async () => {
    const g = await frontDeskGuild(h, 'Gold');
    const member = snowflake();
    h.discord.setDmsClosed(g.bot.id, member, true);
    const stripe = await connectStripe(h, g.t);
    const session = await checkout(g.t, g.planId, member);
    await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
    await send();
    await send();
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
    await send();
    await send();
    expect(h.discord.dms(g.bot.id, member)).toStrictEqual([]);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'pending', attempts: 1 }]);
    await h.container.database.db.execute(sql`UPDATE notifications SET next_attempt_at = now() WHERE project_id = ${g.t.projectId}`);
    await send();
    expect(h.discord.dms(g.bot.id, member)).toHaveLength(1);
    expect(await notificationRows(h, g.t.projectId)).toMatchObject([{ state: 'sent', attempts: 2 }]);
  });

  it('a renewal whose payment fails, from Stripe through the webhook: one DM with Manage billing and the grace period’s end; the retry that pays sends no second one', async () => {
    const g = await frontDeskGuild(h, 'Gold');
    const plan = await createPlan(g.t, { plan_name: 'Monthly', plan_price: '9', plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false } });
    const role = (await g.t.request({ method: 'GET', url: `${g.t.base}/targets` })).json().data.find((x: { kind: string }) => x.kind === 'role');
    await grant(g.t, plan.plan_id, role.target_id);
    await turnOffMessages(g.t, 'confirmation');
    const member = snowflake();
    const stripe = await connectStripe(h, g.t);
    const session = await checkout(g.t, plan.plan_id, member);
    const paid = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, paid);
    const sub = (pick(paid, 'checkout.session.completed').data.object as { subscription: string }).subscription;
    // The paid-through date is an hour away when Stripe's renewal charge fails.
    await h.container.database.db.execute(sql`UPDATE memberships SET end_date = now() + interval '1 hour' WHERE subscription_id = ${sub}`);
    const failedAt = Date.now();
    await deliverAll(h, stripe, h.stripe.world.failRenewal(sub));
    await send();

    const m = await membershipOf(g.t, member);
    expect(m).toMatchObject({ subscription_status: 'past_due', status: 'active' });
    // Access is kept for the grace period (3 days by default) from the failure: the message says until when.
    const kept = Date.parse(m!.membership_end_date);
    expect(Math.abs(kept - (failedAt + h.container.config.payments.gracePeriodMs))).toBeLessThan(60_000);
    const messages = h.discord.dmMessages(g.bot.id, member);
    expect(messages.map((x) => x.content)).toStrictEqual([
      `The payment renewing your Monthly membership failed. You keep access until ${messageInstant(m!.membership_end_date)} while it is tried again: update your card to keep it.`,
    ]);
    expect(messages[0]!.buttons).toStrictEqual([[{ label: 'Manage billing', url: expect.stringMatching(new RegExp(`/p/${g.t.projectId}/portal$`)) }]]);
    expect(await eventsOf(h, g.t.projectId, 'payment.failed')).toHaveLength(1);

    // Stripe's retry pays the same invoice: the membership is extended, and no failure message follows.
    await deliverAll(h, stripe, h.stripe.world.renew(sub));
    await send();
    expect(await membershipOf(g.t, member)).toMatchObject({ subscription_status: 'active', status: 'active' });
    expect(h.discord.dmMessages(g.bot.id, member).filter((x) => x.content.startsWith('The payment renewing'))).toHaveLength(1);
  });
});
