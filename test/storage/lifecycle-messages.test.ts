import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createMembership } from '../support/api.js';
import { discordBotShop, messageInstant, turnOffMessages, useDiscordSender } from '../support/front-desk.js';
import { connectStripe } from '../support/payments.js';
import { onPostgres, useHarness } from '../support/harness.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * The other moments of a membership (docs/lifecycle.md), on both storages: each message queued in
 * the statement of the change (a welcome with the API's create, an "ended" message with the
 * sweeper's expiry, a "will not renew" with the change that cancels a renewal), sent once by the
 * confirmations job through the project's bot on the fake Discord, with its link button; a message
 * the owner turned off is not queued, and the event is written all the same.
 */

const DAY = 86_400_000;

describe(`messages at the other moments (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
  const h = useHarness({ clock });
  const send = useDiscordSender(h);

  const shop = () => discordBotShop(h, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: false, plan_one_time: true } });
  const rows = async (projectId: string) =>
    rowsOf<{ kind: string; state: string; last_error: string | null }>(
      await h.container.database.db.execute(sql`SELECT kind, state, last_error FROM notifications WHERE project_id = ${projectId} ORDER BY created_at, kind`),
    );
  const eventTypes = async (projectId: string) =>
    rowsOf<{ type: string }>(await h.container.database.db.execute(sql`SELECT type FROM events WHERE project_id = ${projectId} ORDER BY seq`)).map((r) => r.type);

  it('welcome: a membership made through the API is welcomed once, with its plan and end date', async () => {
    const s = await shop();
    const m = await createMembership(s.t, { planId: s.planId, endDate: new Date(clock.now().getTime() + 20 * DAY).toISOString() });
    await send();
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([
      `Welcome! Your Gold membership is active until ${messageInstant(m.membership_end_date)}. Use /memberships to check it any time.`,
    ]);
    expect(await rows(s.t.projectId)).toStrictEqual([{ kind: 'welcome', state: 'sent', last_error: null }]);
  });

  it('expired: the sweeper ends it and queues one message with a Renew button (a pay link for the same plan)', async () => {
    const s = await shop();
    const m = await createMembership(s.t, { planId: s.planId, endDate: new Date(clock.now().getTime() + DAY).toISOString() });
    await send();
    clock.advance(DAY + 1000);
    expect(await h.container.stores.expiry.expireDue(clock.now(), 100)).toBe(1);
    expect(await h.container.stores.expiry.expireDue(clock.now(), 100)).toBe(0);
    await send();
    const [, ended] = h.discord.dmMessages(s.bot.id, m.user_id);
    expect(ended!.content).toBe('Your Gold membership has ended.');
    const [[renew]] = ended!.buttons as [[{ label: string; url: string }]];
    expect(renew.label).toBe('Renew');
    const token = /\/pay\/([^/]+)$/.exec(renew.url)![1]!;
    expect(await h.container.services.payLinks.find(s.t.projectId, token)).toMatchObject({ plan_id: s.planId, user_id: m.user_id });
    expect((await rows(s.t.projectId)).map((r) => [r.kind, r.state])).toStrictEqual([['welcome', 'sent'], ['expired', 'sent']]);
  });

  it('cancelled: the change that cancels a renewal writes membership.renewal-cancelled and one message; the same change again, none', async () => {
    const s = await shop();
    const m = await createMembership(s.t, { planId: s.planId, endDate: new Date(clock.now().getTime() + 20 * DAY).toISOString() });
    await h.container.database.db.execute(sql`UPDATE memberships SET subscription_id = 'sub_1', subscription_status = 'active' WHERE id = ${m.membership_id}`);
    const change = (eventAt: Date) =>
      h.container.stores.paidMemberships.setSubscriptionStatus({ projectId: s.t.projectId, subscriptionId: 'sub_1', userId: m.user_id, status: 'active', cancelAtPeriodEnd: true, eventAt }, clock.now());
    expect(await change(clock.now())).toHaveLength(1);
    expect(await change(new Date(clock.now().getTime() + 1000))).toHaveLength(1);
    expect((await eventTypes(s.t.projectId)).filter((t) => t === 'membership.renewal-cancelled')).toHaveLength(1);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)[1]).toBe(
      `Your Gold membership will not renew. You keep access until ${messageInstant(m.membership_end_date)}. Use /memberships to check it any time.`,
    );
  });

  it('payment failed: a renewal\'s failed invoice queues one message with Manage billing and until when access is kept', async () => {
    const s = await shop();
    const m = await createMembership(s.t, { planId: s.planId, endDate: new Date(clock.now().getTime() + DAY).toISOString() });
    await h.container.database.db.execute(sql`UPDATE memberships SET subscription_id = 'sub_2', subscription_status = 'active' WHERE id = ${m.membership_id}`);
    const stripe = await connectStripe(h, s.t);
    const of = { projectId: s.t.projectId, merchantAccountId: stripe.view.merchant_account_id, buyer: { projectId: s.t.projectId, planId: s.planId, userId: m.user_id } };
    const failed = { kind: 'failed' as const, key: 'in_1', buyer: null, amountMinor: 1000, currency: 'usd', invoiceId: 'in_1', subscriptionId: 'sub_2', customerId: 'cus_1' };
    expect(await h.container.stores.payments.recordFailed(of, failed, clock.now())).toBe(true);
    expect(await h.container.stores.payments.recordFailed(of, failed, clock.now())).toBe(false);
    await send();
    const [, told] = h.discord.dmMessages(s.bot.id, m.user_id);
    // The grace period (TENURE_PAYMENTS_GRACE_PERIOD, 3 days by default) counts from the failure, past the end date.
    const kept = new Date(clock.now().getTime() + h.container.config.payments.gracePeriodMs).toISOString();
    expect(told!.content).toBe(`The payment renewing your Gold membership failed. You keep access until ${messageInstant(kept)} while it is tried again: update your card to keep it.`);
    expect(told!.buttons).toStrictEqual([[{ label: 'Manage billing', url: expect.stringMatching(new RegExp(`/p/${s.t.projectId}/portal$`)) }]]);
    expect(h.discord.dmMessages(s.bot.id, m.user_id)).toHaveLength(2);
  });

  it('a message the owner turned off is not queued; its event is written all the same', async () => {
    const s = await shop();
    await turnOffMessages(s.t, 'welcome', 'expired');
    const m = await createMembership(s.t, { planId: s.planId, endDate: new Date(clock.now().getTime() + DAY).toISOString() });
    clock.advance(DAY + 1000);
    await h.container.stores.expiry.expireDue(clock.now(), 100);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([]);
    expect(await rows(s.t.projectId)).toStrictEqual([]);
    expect(await eventTypes(s.t.projectId)).toEqual(expect.arrayContaining(['membership.created', 'membership.expired']));
  });

  it("in the project's language and formats, and in the owner's words", async () => {
    const s = await shop();
    const set = await s.t.request({
      method: 'PATCH',
      url: `${s.t.base}/settings`,
      payload: { default_language: 'de', timezone_preference: 'Europe/Berlin', date_format_preference: 'DD.MM.YYYY', messages: { welcome: { text: { en: 'Hi!', de: 'Hallo {plan}, bis {end_date}!' } } } },
    });
    expect(set.statusCode, set.body).toBe(204);
    const m = await createMembership(s.t, { planId: s.planId, endDate: '2031-01-15T10:00:00.000Z' });
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual(['Hallo Gold, bis 15.01.2031 11:00 MEZ! Mit /memberships kannst du sie jederzeit prüfen.']);
  });
});
