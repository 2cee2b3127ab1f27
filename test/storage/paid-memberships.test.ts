import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createPlan } from '../support/catalogue.js';
import { onPostgres, useHarness, userId } from '../support/harness.js';

/**
 * A payment's and a trial's new membership (docs/payments.md, "What each Stripe event does",
 * "Trials"), on PGlite and PostgreSQL: one statement each, with the user's row and the
 * `membership.created` event, and nothing written for a banned member or one who has a membership.
 */
describe(`paid memberships: a grant's and a trial's new membership (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();
  const now = new Date('2026-03-01T00:00:00.000Z');

  async function setUp() {
    const t = await h.tenant();
    const plan = await createPlan(t, { plan_duration: '30 days' });
    const store = h.container.stores.paidMemberships;
    const grant = (user: string, subscriptionId: string | null) => ({ projectId: t.projectId, userId: user, planId: plan.plan_id, subscriptionId, eventAt: now });
    const membership = async (user: string) =>
      rowsOf<{ end_date: string | Date; trial_ends_at: string | Date | null; subscription_id: string | null; subscription_status: string | null }>(
        await h.database.db.execute(sql`
          SELECT end_date, trial_ends_at, subscription_id, subscription_status FROM memberships WHERE project_id = ${t.projectId} AND user_id = ${user}`),
      );
    const created = async (user: string) =>
      rowsOf<{ n: number }>(
        await h.database.db.execute(sql`
          SELECT count(*)::int AS n FROM events WHERE project_id = ${t.projectId} AND type = 'membership.created' AND data->'membership'->>'user_id' = ${user}`),
      )[0]!.n;
    const ban = (user: string) => h.database.db.execute(sql`INSERT INTO bans (project_id, user_id) VALUES (${t.projectId}, ${user})`);
    const users = async (user: string) =>
      rowsOf(await h.database.db.execute(sql`SELECT 1 FROM users WHERE project_id = ${t.projectId} AND user_id = ${user}`)).length;
    return { store, grant, membership, created, ban, users };
  }

  it("a payment's grant: the plan's duration from now, the subscription active; once; none for a banned member", async () => {
    const { store, grant, membership, created, ban, users } = await setUp();
    const user = userId();
    expect(await store.createForPlan(grant(user, 'sub_1'), now)).toStrictEqual({ created: true, banned: false });
    const [row] = await membership(user);
    expect(new Date(row!.end_date)).toStrictEqual(new Date('2026-03-31T00:00:00.000Z'));
    expect(row).toMatchObject({ trial_ends_at: null, subscription_id: 'sub_1', subscription_status: 'active' });
    expect(await created(user)).toBe(1);
    expect(await users(user)).toBe(1);
    // A membership there already (one made at the same moment): nothing written.
    expect(await store.createForPlan(grant(user, null), now)).toStrictEqual({ created: false, banned: false });
    expect(await created(user)).toBe(1);
    // A one-time payment names no subscription.
    const once = userId();
    expect(await store.createForPlan(grant(once, null), now)).toStrictEqual({ created: true, banned: false });
    expect((await membership(once))[0]).toMatchObject({ subscription_id: null, subscription_status: null });
    const banned = userId();
    await ban(banned);
    expect(await store.createForPlan(grant(banned, 'sub_2'), now)).toStrictEqual({ created: false, banned: true });
    expect(await membership(banned)).toStrictEqual([]);
    expect(await created(banned)).toBe(0);
    expect(await users(banned)).toBe(0);
  });

  it("a trial's grant: until the trial's end, marked in trial; none for a banned member", async () => {
    const { store, grant, membership, created, ban, users } = await setUp();
    const trialEnd = new Date('2026-03-08T00:00:00.000Z');
    const user = userId();
    expect(await store.grantTrial(grant(user, 'sub_t'), trialEnd, now)).toBe('created');
    const [row] = await membership(user);
    expect(new Date(row!.end_date)).toStrictEqual(trialEnd);
    expect(new Date(row!.trial_ends_at!)).toStrictEqual(trialEnd);
    expect(row).toMatchObject({ subscription_id: 'sub_t', subscription_status: 'trialing' });
    expect(await created(user)).toBe(1);
    expect(await users(user)).toBe(1);
    const banned = userId();
    await ban(banned);
    expect(await store.grantTrial(grant(banned, 'sub_b'), trialEnd, now)).toBe('banned');
    expect(await membership(banned)).toStrictEqual([]);
    expect(await created(banned)).toBe(0);
    expect(await users(banned)).toBe(0);
  });
});
