import type { REST } from '@discordjs/rest';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import { openDatabase, rowsOf } from '../../src/database/db.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { REMINDER_LANES } from '../../src/domain/lifecycle/reminder-rules.js';
import { RemindersJob } from '../../src/domain/lifecycle/reminders.job.js';
import { createLogger } from '../../src/logger.js';
import { createAccessWorker, createConfirmationJob } from '../../src/platform-jobs.js';
import { RemindersStore } from '../../src/store/reminders.store.js';
import { createMembership } from '../support/api.js';
import { discordBotShop, messageInstant, turnOffMessages, type BotShop } from '../support/front-desk.js';
import { onPostgres, useHarness, type Harness, type Tenant } from '../support/harness.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * Reminders before a membership ends (docs/lifecycle.md), on both storages, on a manual clock: the
 * reminders job writes one `membership.expiring` event and one message per (membership, end date,
 * offset), and the confirmations job sends the message through the project's bot on the fake
 * Discord: late after an outage (an event for each offset passed, a message for the nearest), re-armed by an extension, never for an
 * ended or deleted membership, never twice, held through quiet hours.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A shop whose members are not welcomed (a welcome is the other moments' test's), so the DMs here are the reminders. */
async function shop(h: Harness): Promise<BotShop> {
  const s = await discordBotShop(h, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: false, plan_one_time: true } });
  await turnOffMessages(s.t, 'welcome');
  return s;
}

describe(`reminders before the end (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
  const h = useHarness({ clock });
  const jobs: ConfirmationJob[] = [];
  let holder: AccessWorker<REST> | null = null;
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    await holder?.stop(0);
    holder = null;
  });

  const remind = (store = h.container.stores.reminders, batchSize = 1000) =>
    new RemindersJob(store, clock, createLogger('silent'), { intervalMs: 60_000, batchSize }).passOnce();
  /** The confirmations job as a worker builds it; each pass takes the bot again (the clock may have passed its lease). */
  const send = async () => {
    holder ??= createAccessWorker(h.container)!;
    if (jobs.length === 0) jobs.push(createConfirmationJob(h.container, { discord: holder, telegram: null }, { pollMs: 60_000 })!);
    await holder.leases.acquire();
    jobs[0]!.wake();
    await jobs[0]!.idle();
  };
  const endingIn = (s: BotShop, ms: number) => createMembership(s.t, { planId: s.planId, endDate: new Date(clock.now().getTime() + ms).toISOString() });
  const expiring = async (projectId: string) =>
    rowsOf<{ data: { offset: string; end_date: string; membership: { membership_id: string; membership_end_date: string } } }>(
      await h.container.database.db.execute(sql`SELECT data FROM events WHERE project_id = ${projectId} AND type = 'membership.expiring' ORDER BY emitted_at, id`),
    ).map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data));
  const reminderRows = async (projectId: string) =>
    rowsOf<{ offset: string; state: string }>(
      await h.container.database.db.execute(sql`SELECT reminder_offset AS "offset", state FROM reminders WHERE project_id = ${projectId} ORDER BY reminder_offset`),
    );
  const setting = async (t: Tenant, payload: object) => expect((await t.request({ method: 'PATCH', url: `${t.base}/settings`, payload })).statusCode).toBe(204);

  it('a due reminder: one event and one DM with a pay link for the same plan, once however many passes', async () => {
    const s = await shop(h);
    const m = await endingIn(s, 5 * DAY);
    await remind();
    expect(await expiring(s.t.projectId)).toStrictEqual([]);
    clock.advance(2 * DAY - 1);
    await remind();
    expect(await expiring(s.t.projectId)).toStrictEqual([]);
    clock.advance(1);
    await remind();
    await remind();
    const events = await expiring(s.t.projectId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ offset: '3d', end_date: m.membership_end_date, membership: { membership_id: m.membership_id } });
    await send();
    await send();
    const dms = h.discord.dms(s.bot.id, m.user_id);
    expect(dms).toHaveLength(1);
    expect(dms[0]).toBe(`Your Gold membership ends on ${messageInstant(m.membership_end_date)}.`);
    // The Renew button (a Discord link button) is a pay link of this member for this plan.
    const [[renew]] = h.discord.dmMessages(s.bot.id, m.user_id)[0]!.buttons as [[{ label: string; url: string }]];
    expect(renew.label).toBe('Renew');
    const token = /\/pay\/([^/]+)$/.exec(renew.url)![1]!;
    expect(await h.container.services.payLinks.find(s.t.projectId, token)).toMatchObject({ plan_id: s.planId, user_id: m.user_id, open: true });
  });

  it('after an outage past two offsets: an event for each, late, while the membership is active; a message for the nearest only', async () => {
    const s = await shop(h);
    const m = await endingIn(s, 5 * DAY);
    await remind();
    clock.advance(4 * DAY + 12 * HOUR);
    await remind();
    expect((await expiring(s.t.projectId)).map((e) => e.offset).sort()).toStrictEqual(['1d', '3d']);
    expect(await reminderRows(s.t.projectId)).toStrictEqual([{ offset: '1d', state: 'sent' }, { offset: '3d', state: 'skipped' }]);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toHaveLength(1);
    clock.advance(HOUR);
    await remind();
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toHaveLength(1);
  });

  it('an extension between two offsets re-arms them for the new end date; the unsent one of the old date is dropped', async () => {
    const s = await shop(h);
    const m = await endingIn(s, 5 * DAY);
    await remind();
    clock.advance(2 * DAY);
    await remind();
    const newEnd = new Date(new Date(m.membership_end_date).getTime() + 10 * DAY).toISOString();
    const res = await s.t.request({ method: 'PATCH', url: `${s.t.base}/memberships/${m.user_id}/extend`, payload: { extend: newEnd } });
    expect(res.statusCode, res.body).toBe(200);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([]);
    // Past the old end date's 1d instant: nothing for the old date.
    clock.advance(2 * DAY);
    await remind();
    expect((await expiring(s.t.projectId)).map((e) => e.end_date)).toStrictEqual([m.membership_end_date]);
    // The new date's 3d instant.
    clock.advance(8 * DAY);
    await remind();
    await send();
    const events = await expiring(s.t.projectId);
    expect(events.map((e) => [e.offset, e.end_date])).toStrictEqual([['3d', m.membership_end_date], ['3d', newEnd]]);
    const dms = h.discord.dms(s.bot.id, m.user_id);
    expect(dms).toHaveLength(1);
    expect(dms[0]).toContain(messageInstant(newEnd));
  });

  it('none for a deleted membership or one that ended meanwhile; a queued one is dropped when its membership is gone', async () => {
    const s = await shop(h);
    const deleted = await endingIn(s, 5 * DAY);
    const ended = await endingIn(s, 5 * DAY);
    const gone = await endingIn(s, 5 * DAY);
    await remind();
    expect((await s.t.request({ method: 'DELETE', url: `${s.t.base}/memberships/${deleted.membership_id}` })).statusCode).toBe(204);
    clock.advance(2 * DAY);
    await remind();
    expect((await expiring(s.t.projectId)).map((e) => e.membership.membership_id).sort()).toStrictEqual([ended.membership_id, gone.membership_id].sort());
    expect((await s.t.request({ method: 'DELETE', url: `${s.t.base}/memberships/${gone.membership_id}` })).statusCode).toBe(204);
    await send();
    expect(h.discord.dms(s.bot.id, gone.user_id)).toStrictEqual([]);
    expect(h.discord.dms(s.bot.id, ended.user_id)).toHaveLength(1);
    // Down past the end: the 1d reminder of the ended membership is never written.
    clock.advance(4 * DAY);
    await remind();
    await send();
    expect(await expiring(s.t.projectId)).toHaveLength(2);
    expect(h.discord.dms(s.bot.id, ended.user_id)).toHaveLength(1);
  });

  it('several reminder jobs at once, on separate connections: one event and one message per membership', async () => {
    const s = await shop(h);
    const members = await Promise.all(Array.from({ length: 30 }, () => endingIn(s, 5 * DAY)));
    clock.advance(2 * DAY);
    const other = onPostgres ? await openDatabase(h.storage) : null;
    try {
      const stores = [h.container.stores.reminders, new RemindersStore((other ?? h.container.database).db)];
      const written = await Promise.all(Array.from({ length: 4 }, (_, i) => remind(stores[i % 2], 7)));
      expect(written.reduce((a, b) => a + b, 0)).toBe(30);
      // A pass that lost the cursor's lock to another one meanwhile catches up afterwards, writing nothing new.
      expect(await remind()).toBe(0);
    } finally {
      await other?.close();
    }
    const events = await expiring(s.t.projectId);
    expect(new Set(events.map((e) => e.membership.membership_id))).toStrictEqual(new Set(members.map((m) => m.membership_id)));
    expect(events).toHaveLength(30);
    const queued = rowsOf<{ n: number }>(await h.container.database.db.execute(sql`SELECT count(*)::int AS n FROM notifications WHERE project_id = ${s.t.projectId} AND kind = 'reminder'`));
    expect(queued[0]!.n).toBe(30);
  });

  it('held through quiet hours across midnight and the spring change in Berlin, then sent once', async () => {
    const s = await shop(h);
    await setting(s.t, { timezone_preference: 'Europe/Berlin', quiet_hours: '22:00-08:00', reminder_offsets: ['1d'] });
    // 22:30 CET on Saturday 27 March 2027; that night Berlin moves from 02:00 CET to 03:00 CEST.
    clock.set(new Date('2027-03-27T21:30:00.000Z'));
    const m = await endingIn(s, DAY + HOUR);
    await remind();
    clock.advance(HOUR);
    await remind();
    expect(await expiring(s.t.projectId)).toHaveLength(1);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([]);
    // 07:59 CEST (05:59 UTC): still quiet.
    clock.set(new Date('2027-03-28T05:59:00.000Z'));
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([]);
    // 08:00 CEST, 06:00 UTC: the end of the quiet hours.
    clock.set(new Date('2027-03-28T06:00:00.000Z'));
    await send();
    await send();
    const dms = h.discord.dms(s.bot.id, m.user_id);
    expect(dms).toHaveLength(1);
    expect(dms[0]).toBe('Your Gold membership ends on 2027-03-29 00:30 CEST.');
  });

  it('a crash between the event and the message: the queued row survives, and the restarted sender sends it once', async () => {
    const s = await shop(h);
    const m = await endingIn(s, 5 * DAY);
    clock.advance(2 * DAY);
    await remind();
    // A worker claims it and dies before calling Discord: the claim's lease holds it for a minute.
    holder = createAccessWorker(h.container)!;
    await holder.leases.acquire();
    const claimed = await h.container.stores.notifications.claim([holder.id], clock.now(), new Date(clock.now().getTime() + 60_000), 10, 0);
    expect(claimed.map((c) => c.kind)).toStrictEqual(['reminder']);
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([]);
    clock.advance(60_000);
    await send();
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toHaveLength(1);
    expect(await expiring(s.t.projectId)).toHaveLength(1);
  });

  it('an offset taken up applies to the instants after it: a membership already inside its window does not get it', async () => {
    const s = await shop(h);
    const inside = await endingIn(s, 5 * DAY);
    const later = await endingIn(s, 10 * DAY);
    await setting(s.t, { reminder_offsets: ['7d'] });
    await remind();
    clock.advance(3 * DAY);
    await remind();
    expect((await expiring(s.t.projectId)).map((e) => [e.offset, e.membership.membership_id])).toStrictEqual([['7d', later.membership_id]]);
    expect(inside.membership_id).not.toBe(later.membership_id);
  });

  it('a membership without a plan gets its reminder too, with how to check it instead of a link', async () => {
    const s = await shop(h);
    const m = await createMembership(s.t, { endDate: new Date(clock.now().getTime() + 5 * DAY).toISOString() });
    await remind();
    clock.advance(4 * DAY);
    await remind();
    await send();
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([
      expect.stringMatching(/^Your membership ends on .+ UTC\. Use \/memberships to check it any time\.$/),
    ]);
  });

  it('turned off with []: no event, no message', async () => {
    const s = await shop(h);
    await setting(s.t, { reminder_offsets: [] });
    const m = await endingIn(s, 5 * DAY);
    clock.advance(4 * DAY + 12 * HOUR);
    await remind();
    await send();
    expect(await expiring(s.t.projectId)).toStrictEqual([]);
    expect(h.discord.dms(s.bot.id, m.user_id)).toStrictEqual([]);
  });

  it("each lane has its own range of an index whose lane expression counts REMINDER_LANES lanes, as the scan's does", async () => {
    const index = rowsOf<{ indexdef: string }>(
      await h.database.db.execute(sql`SELECT indexdef FROM pg_indexes WHERE indexname = 'memberships_active_lane_end_idx'`),
    );
    expect(index).toHaveLength(1);
    expect(index[0]!.indexdef).toContain(`((get_byte(uuid_send(id), 15) % ${REMINDER_LANES})), end_date, id) WHERE (status = 'active'::text)`);
  });
});
