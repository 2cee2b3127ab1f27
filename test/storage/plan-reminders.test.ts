import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { RemindersJob } from '../../src/domain/lifecycle/reminders.job.js';
import { createLogger } from '../../src/logger.js';
import { createMembership } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { onPostgres, userId, useHarness, type Tenant } from '../support/harness.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * On both storages, on a manual clock: a plan's own `reminder_offsets` (docs/lifecycle.md) win
 * over the project's setting in the reminders job's set-based scan; a trial's membership
 * (docs/payments.md, "Trials") gets its reminders before the trial's end, the event saying
 * `in_trial`; and the trial reservation checkout takes (PaymentsStore) is one per user per
 * project, whoever asks at once.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe(`per-plan reminder offsets and trials (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
  const h = useHarness({ clock });
  const remind = () => new RemindersJob(h.container.stores.reminders, clock, createLogger('silent'), { intervalMs: 60_000, batchSize: 1000 }).passOnce();
  const expiring = async (projectId: string) =>
    rowsOf<{ data: unknown }>(
      await h.container.database.db.execute(sql`SELECT data FROM events WHERE project_id = ${projectId} AND type = 'membership.expiring' ORDER BY emitted_at, id`),
    ).map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { offset: string; membership: { membership_id: string; in_trial?: boolean; trial_ends_at?: string } });
  const endingIn = (t: Tenant, planId: string, ms: number) => createMembership(t, { planId, endDate: new Date(clock.now().getTime() + ms).toISOString() });

  it("a plan's reminder_offsets replace the project's for its members; [] turns them off for that plan alone", async () => {
    const t = await h.tenant();
    const own = await createPlan(t, { plan_name: 'Own', reminder_offsets: ['5d', '12h'] });
    const silent = await createPlan(t, { plan_name: 'Silent', reminder_offsets: [] });
    const usual = await createPlan(t, { plan_name: 'Usual' });
    await remind(); // the cursors start now
    const a = await endingIn(t, own.plan_id, 6 * DAY);
    const b = await endingIn(t, silent.plan_id, 6 * DAY);
    const c = await endingIn(t, usual.plan_id, 6 * DAY);
    for (let hours = 0; hours < 6 * 24; hours += 6) {
      clock.advance(6 * HOUR);
      await remind();
    }
    const events = await expiring(t.projectId);
    const of = (id: string) => events.filter((e) => e.membership.membership_id === id).map((e) => e.offset);
    expect(of(a.membership_id)).toStrictEqual(['5d', '12h']);
    expect(of(b.membership_id)).toStrictEqual([]);
    expect(of(c.membership_id)).toStrictEqual(['3d', '1d']);
  });

  it("a trial's membership is reminded before the trial ends, its event saying in_trial", async () => {
    const t = await h.tenant();
    const plan = await createPlan(t, { plan_data: { plan_recurring: true, plan_one_time: false }, trial_days: 7 });
    await remind();
    const user = userId();
    const now = clock.now();
    const trialEnd = new Date(now.getTime() + 7 * DAY);
    const grant = { projectId: t.projectId, userId: user, planId: plan.plan_id, subscriptionId: 'sub_trial1', eventAt: now };
    expect(await h.container.stores.paidMemberships.grantTrial(grant, trialEnd, now)).toBe('created');
    clock.advance(4 * DAY + HOUR);
    await remind();
    const events = await expiring(t.projectId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ offset: '3d', membership: { in_trial: true, trial_ends_at: trialEnd.toISOString() } });
  });

  it('one trial per user per project: of two checkouts reserving at once one holds it; a retry of the holder holds it again; it started, nobody gets another', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t, { plan_data: { plan_recurring: true, plan_one_time: false }, trial_days: 3 });
    const payments = h.container.stores.payments;
    const user = userId();
    const ask = (checkoutKey: string) => payments.reserveTrial({ projectId: t.projectId, userId: user, planId: plan.plan_id, trialDays: 3, checkoutKey }, clock.now());
    const answers = await Promise.all(['k1', 'k2', 'k3', 'k4'].map(ask));
    expect(answers.filter(Boolean)).toHaveLength(1);
    const holder = ['k1', 'k2', 'k3', 'k4'][answers.indexOf(true)]!;
    expect(await ask(holder)).toBe(true);
    await payments.attachTrialSession(t.projectId, user, holder, 'cs_test_held');
    expect(await payments.releaseSessionTrial(t.projectId, 'cs_test_other')).toBe(false);
    expect(await payments.startTrial({ projectId: t.projectId, userId: user, planId: plan.plan_id, trialDays: 3, sessionId: 'cs_test_held' }, clock.now())).toBe(true);
    expect(await payments.startTrial({ projectId: t.projectId, userId: user, planId: plan.plan_id, trialDays: 3, sessionId: null }, clock.now())).toBe(false);
    expect(await payments.releaseSessionTrial(t.projectId, 'cs_test_held')).toBe(false);
    expect(await ask(holder)).toBe(false);
    expect(await ask('k5')).toBe(false);
  });
});
