import { afterEach, describe, expect, it } from 'vitest';
import { RemindersJob } from '../../src/domain/lifecycle/reminders.job.js';
import { createLogger } from '../../src/logger.js';
import { createMembership } from '../support/api.js';
import { discordBotShop, useDiscordSender } from '../support/front-desk.js';
import { onPostgres, useHarness } from '../support/harness.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * Quiet hours in Europe/Berlin on a manual clock, on both storages (docs/lifecycle.md, "Quiet hours
 * and time zones"): a reminder due inside them is held and sent at the instant they end on the
 * wall clock, not a millisecond before: across an ordinary midnight, the autumn night an hour
 * longer (the last Sunday of October), an end time that happens twice that night (the first one),
 * and one that does not exist the spring night (the first moment after it). The spring night with
 * an 08:00 end is in reminders.test.ts.
 */

const HOUR = 3_600_000;

describe(`reminders held through quiet hours in Berlin (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const clock = new ManualClock(new Date('2027-01-01T00:00:00.000Z'));
  const h = useHarness({ clock });
  // Hooks after each test run last-registered first: the sender stops, then the harness resets.
  afterEach(() => h.reset());
  const send = useDiscordSender(h);

  const remind = () => new RemindersJob(h.container.stores.reminders, clock, createLogger('silent'), { intervalMs: 60_000, batchSize: 1000 }).passOnce();

  /**
   * A membership whose `1d` reminder falls due at `due` (UTC), with `quiet` in Berlin: held until
   * just before `sentAt`, sent at `sentAt`, once.
   */
  async function heldUntil(quiet: string, due: string, sentAt: string) {
    clock.set(new Date(new Date(due).getTime() - 2 * HOUR));
    // Welcome off: the one DM here is the reminder, held through the night.
    const s = await discordBotShop(h, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: false, plan_one_time: true } });
    const res = await s.t.request({ method: 'PATCH', url: `${s.t.base}/settings`, payload: { timezone_preference: 'Europe/Berlin', quiet_hours: quiet, reminder_offsets: ['1d'], messages: { welcome: { enabled: false } } } });
    expect(res.statusCode, res.body).toBe(204);
    const m = await createMembership(s.t, { planId: s.planId, endDate: new Date(new Date(due).getTime() + 24 * HOUR).toISOString() });
    await remind();
    clock.set(new Date(due));
    expect(await remind()).toBe(1);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id), `held at ${due}`).toStrictEqual([]);
    clock.set(new Date(new Date(sentAt).getTime() - 1));
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id), `still held a millisecond before ${sentAt}`).toStrictEqual([]);
    clock.set(new Date(sentAt));
    await send();
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id), `sent at ${sentAt}`).toHaveLength(1);
    return h.discord.dms(s.bot.id, m.user_id)[0]!;
  }

  it('across an ordinary midnight: due 23:30 CET, sent at 08:00 CET the next morning', async () => {
    const text = await heldUntil('22:00-08:00', '2027-01-14T22:30:00.000Z', '2027-01-15T07:00:00.000Z');
    expect(text).toMatch(/^Your Gold membership ends on 2027-01-15 23:30 CET\./);
  });

  it('the autumn night, an hour longer: due 22:30 CEST on 30 October, sent at 08:00 CET (07:00 UTC), not at 06:00 UTC', async () => {
    // 31 October 2027 is the last Sunday of October: 03:00 CEST becomes 02:00 CET.
    await heldUntil('22:00-08:00', '2027-10-30T20:30:00.000Z', '2027-10-31T07:00:00.000Z');
  });

  it('an end time that happens twice that autumn night ends the quiet hours the first time (02:30 CEST, 00:30 UTC)', async () => {
    await heldUntil('22:00-02:30', '2027-10-30T20:30:00.000Z', '2027-10-31T00:30:00.000Z');
  });

  it('an end time that does not exist the spring night ends them at the first moment after it (03:00 CEST, 01:00 UTC)', async () => {
    // 28 March 2027: 02:00 CET becomes 03:00 CEST, so 02:30 never comes.
    await heldUntil('22:00-02:30', '2027-03-27T21:30:00.000Z', '2027-03-28T01:00:00.000Z');
  });
});
