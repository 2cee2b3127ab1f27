import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { PLAN_POLL_MS } from '../../src/access/planner.js';
import type { Platform } from '../../src/domain/targets/target.view.js';
import { AccessPlanStore } from '../../src/store/access-plan.store.js';
import { rowsOf } from '../../src/database/db.js';
import { ExpiryStore } from '../../src/store/expiry.store.js';
import { createMembership } from '../support/api.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { onPostgres, useHarness, type Tenant } from '../support/harness.js';
import { eventually, ManualClock } from '../support/webhook-harness.js';
import { startWorkerRuntime } from '../../src/worker-runtime.js';

/**
 * The access planner's SQL (src/store/access-plan.store.ts): every change that affects access
 * leads, through its outbox event, to the right `desired` and state for each (member, target),
 * set-based; rows whose desired did not change are not written; each event is planned once by
 * however many planners run.
 */

const DAY = 86_400_000;

interface Row {
  user_id: string;
  target_id: string;
  platform: string;
  kind: string;
  external_id: string;
  guild_id: string | null;
  on_expiry: string;
  desired: string;
  applied: string | null;
  state: string;
  attempts: number;
  last_error: unknown;
}

describe('access planner', () => {
  const clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
  const h = useHarness({ clock });
  // Each test drains "every unplanned event of the database": none may be left from another.
  beforeEach(() => h.reset());

  const store = () => h.container.stores.accessPlan;

  /** Plans until no event is left; returns how many rows changed. */
  async function drain(planner = store()): Promise<number> {
    let changed = 0;
    for (;;) {
      const batch = await planner.planBatch(500);
      changed += batch.changed;
      if (batch.events < 500) return changed;
    }
  }

  /** An integration row as the connection route writes it (a dummy sealed token: nothing calls the platform here). */
  async function connect(t: Tenant, platform: Platform = 'discord'): Promise<void> {
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name)
      VALUES (${t.projectId}, ${platform}, 'v1.dummy.sealed', ${String(randomInt(1, 2 ** 47))}, 'tenure-bot')`);
  }

  /** A connected project with a plan granting a Discord role inside a guild target. */
  async function setup() {
    const t = await h.tenant();
    await connect(t);
    const guild = await createTarget(t, { kind: 'guild', target_name: 'Server' });
    const role = await createTarget(t, { kind: 'role', parent_target_id: guild.target_id });
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, role.target_id);
    return { t, guild, role, plan };
  }

  const member = (t: Tenant, planId: string, days = 10) =>
    createMembership(t, { planId, endDate: new Date(clock.now().getTime() + days * DAY).toISOString() });

  async function rows(t: Tenant): Promise<Row[]> {
    return rowsOf<Row>(
      await h.database.db.execute(sql`
        SELECT user_id, target_id::text, platform, kind, external_id, guild_id, on_expiry, desired, applied, state, attempts, last_error
        FROM access WHERE project_id = ${t.projectId} ORDER BY user_id, target_id`),
    );
  }

  const row = async (t: Tenant, user: string, targetId: string) => (await rows(t)).find((r) => r.user_id === user && r.target_id === targetId);

  /** What the worker would record after applying the row's desired state on the platform. */
  async function applied(t: Tenant, user?: string) {
    await h.database.db.execute(sql`
      UPDATE access SET applied = desired, state = 'synced', attempts = 1, synced_at = now()
      WHERE project_id = ${t.projectId} ${user === undefined ? sql`` : sql`AND user_id = ${user}`}`);
  }

  async function patch(t: Tenant, url: string, payload: object, method: 'PATCH' | 'POST' | 'DELETE' | 'PUT' = 'PATCH') {
    const res = await t.request({ method, url: `${t.base}${url}`, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res;
  }

  const pick = (r: Row | undefined) => r && { desired: r.desired, state: r.state, applied: r.applied, attempts: r.attempts };

  it('membership created: a granted, pending row per managed target, with the target’s platform ids and on_expiry copied', async () => {
    const { t, guild, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    const noPlan = await createMembership(t);
    expect(await drain()).toBe(1);
    expect(await rows(t)).toStrictEqual([
      {
        user_id: m.user_id,
        target_id: role.target_id,
        platform: 'discord',
        kind: 'role',
        external_id: role.external_id,
        guild_id: guild.external_id,
        on_expiry: 'remove_role',
        desired: 'granted',
        applied: null,
        state: 'pending',
        attempts: 0,
        last_error: null,
      },
    ]);
    expect(noPlan.plan_id).toBeNull();
    // Every event is read once, whatever its type (live-only events are never queued).
    const unplanned = rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM event_plan_queue`));
    expect(unplanned[0]!.n).toBe(0);
  });

  it('no rows on a platform the project has not connected; connecting and planning the project adds them', async () => {
    const t = await h.tenant();
    const group = await createTarget(t, { platform: 'telegram', kind: 'group', external_id: '-1001' });
    const channel = await createTarget(t, { kind: 'channel', target_name: 'Discord channel' });
    const [telegram, discord] = [await createPlan(t), await createPlan(t, { plan_name: 'Discord' })];
    await grant(t, telegram.plan_id, group.target_id);
    await grant(t, discord.plan_id, channel.target_id);
    const [a, b] = [await member(t, telegram.plan_id), await member(t, discord.plan_id)];
    await connect(t, 'discord');
    expect(await drain()).toBe(0);
    // A Discord channel is reached through roles: tenure manages nothing there.
    expect(await rows(t)).toStrictEqual([]);
    await connect(t, 'telegram');
    expect(await store().planProject(t.projectId)).toBe(1);
    expect((await rows(t)).map((r) => [r.user_id, r.target_id, r.desired, r.on_expiry, r.guild_id])).toStrictEqual([
      [a.user_id, group.target_id, 'granted', 'kick', null],
    ]);
    expect(b.plan_id).toBe(discord.plan_id);
  });

  it('queues for planning only the events of projects with a platform connected, live-only ones never', async () => {
    const queued = async (t: Tenant) =>
      rowsOf<{ type: string }>(
        await h.database.db.execute(sql`
          SELECT e.type FROM event_plan_queue q JOIN events e ON e.seq = q.seq WHERE e.project_id = ${t.projectId} ORDER BY e.seq`),
      ).map((r) => r.type);
    const t = await h.tenant();
    const plan = await createPlan(t);
    await member(t, plan.plan_id);
    expect(await queued(t)).toStrictEqual([]);
    await connect(t);
    await member(t, plan.plan_id);
    await h.database.db.execute(sql`
      INSERT INTO events (project_id, type, data, live_only) VALUES (${t.projectId}, 'webhook.delivery-failed', '{}'::jsonb, true)`);
    expect(await queued(t)).toStrictEqual(['membership.created']);
    // Broadcast marks are another matter: none, since nobody listens to the project live
    // (test/storage/live-events.claim.test.ts has the events of a project with a live audience).
    const marked = rowsOf<{ n: number }>(
      await h.database.db.execute(sql`
        SELECT count(*)::int AS n FROM events e JOIN event_broadcasts b ON b.seq = e.seq WHERE e.project_id = ${t.projectId}`),
    );
    expect(marked[0]!.n).toBe(0);
  });

  it('extended: an expired member extended gets the grant back (synced with no call when the platform still has it)', async () => {
    const { t, role, plan } = await setup();
    const [m, n] = [await member(t, plan.plan_id, 1), await member(t, plan.plan_id, 1)];
    await drain();
    await applied(t);
    clock.advance(DAY);
    expect(await new ExpiryStore(h.database.db).expireDue(clock.now(), 100)).toBe(2);
    await drain();
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 });
    await applied(t, n.user_id); // n's role was taken away; m's not yet
    for (const u of [m, n]) await patch(t, `/memberships/${u.user_id}/extend`, { extend: new Date(clock.now().getTime() + 5 * DAY).toISOString() });
    await drain();
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'granted', state: 'synced', applied: 'granted', attempts: 0 });
    expect(pick(await row(t, n.user_id, role.target_id))).toStrictEqual({ desired: 'granted', state: 'pending', applied: 'revoked', attempts: 0 });
  });

  it('expired (the sweeper’s event): revoked, pending where tenure granted it, synced with no call where it never did', async () => {
    const { t, role, plan } = await setup();
    const [m, n] = [await member(t, plan.plan_id, 1), await member(t, plan.plan_id, 1)];
    const stays = await member(t, plan.plan_id, 3);
    await drain();
    await applied(t, m.user_id);
    clock.advance(DAY);
    // Nothing changes before the sweeper announces the expiry.
    expect(await drain()).toBe(0);
    await new ExpiryStore(h.database.db).expireDue(clock.now(), 100);
    expect(await drain()).toBe(2);
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 });
    expect(pick(await row(t, n.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'synced', applied: null, attempts: 0 });
    expect((await row(t, stays.user_id, role.target_id))?.desired).toBe('granted');
  });

  it('deleted: revoked', async () => {
    const { t, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    await drain();
    await applied(t);
    await patch(t, `/memberships/${m.membership_id}`, {}, 'DELETE');
    expect(await drain()).toBe(1);
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 });
  });

  it('banned: revoked at once; unbanned: granted again', async () => {
    const { t, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    await drain();
    await applied(t);
    await patch(t, `/ban/${m.user_id}`, { reason: 'abuse' }, 'PUT');
    expect(await drain()).toBe(1);
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 });
    await applied(t);
    await patch(t, `/ban/${m.user_id}`, {}, 'DELETE');
    expect(await drain()).toBe(1);
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'granted', state: 'pending', applied: 'revoked', attempts: 0 });
  });

  it('bulk-extended: every expired member of a large project granted again, range by range, in set-based statements', async () => {
    const { t, role, plan } = await setup();
    const n = 3_000;
    // Members expired a day ago whose role tenure already took away, inserted as an import would.
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, plan_id, end_date, status, created_at)
      SELECT ${t.projectId}, (200000000000 + g)::text, ${plan.plan_id}, now() - interval '1 day', 'expired', now() - interval '1 hour'
      FROM generate_series(1, ${n}) g`);
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, guild_id, on_expiry, desired, applied, state, synced_at)
      SELECT ${t.projectId}, ${role.target_id}, (200000000000 + g)::text, 'discord', 'role', ${role.external_id}, NULL, 'remove_role',
             'revoked', 'revoked', 'synced', now()
      FROM generate_series(1, ${n}) g`);
    // A row past the last membership (its membership deleted before): stays revoked, not touched.
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, applied, state)
      VALUES (${t.projectId}, ${role.target_id}, '999999999999', 'discord', 'role', ${role.external_id}, 'remove_role', 'revoked', 'revoked', 'synced')`);
    const res = await patch(t, '/memberships/extend', { extend: new Date(clock.now().getTime() + 30 * DAY).toISOString() });
    expect(res.json().total).toBe(n);
    // Ranges of 700 members: five statements, each its own transaction.
    expect(await drain(new AccessPlanStore(h.database.db, clock, { projectBatch: 700 }))).toBe(n);
    const summary = rowsOf<{ desired: string; state: string; n: number }>(
      await h.database.db.execute(sql`
        SELECT desired, state, count(*)::int AS n FROM access WHERE project_id = ${t.projectId} GROUP BY 1, 2 ORDER BY 1, 2`),
    );
    expect(summary).toStrictEqual([
      { desired: 'granted', state: 'pending', n },
      { desired: 'revoked', state: 'synced', n: 1 },
    ]);
  });

  it('a whole-project re-plan a crash interrupted between ranges is finished by the next planner’s resume', async () => {
    const { t, plan } = await setup();
    const n = 2_000;
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, plan_id, end_date, status, created_at)
      SELECT ${t.projectId}, (300000000000 + g)::text, ${plan.plan_id}, now() - interval '1 day', 'expired', now() - interval '1 hour'
      FROM generate_series(1, ${n}) g`);
    await drain();
    await patch(t, '/memberships/extend', { extend: new Date(clock.now().getTime() + 30 * DAY).toISOString() });
    // The process dies after the first range committed: every later transaction fails.
    let transactions = 0;
    const dying = new Proxy(h.database.db, {
      get(target, prop, receiver) {
        if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
        return (...args: Parameters<typeof target.transaction>) => {
          if (++transactions > 1) return Promise.reject(new Error('killed'));
          return target.transaction(...args);
        };
      },
    });
    await expect(new AccessPlanStore(dying, clock, { projectBatch: 700 }).planBatch(500)).rejects.toThrow('killed');
    const granted = async () =>
      rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM access WHERE project_id = ${t.projectId} AND desired = 'granted'`))[0]!.n;
    expect(await granted()).toBe(700);
    const jobs = async () => rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM access_plan_jobs WHERE project_id = ${t.projectId}`))[0]!.n;
    expect(await jobs()).toBe(1);
    // Its event is planned (nothing to claim again), and a fresh job is not taken over before it goes stale.
    expect(await drain()).toBe(0);
    const next = new AccessPlanStore(h.database.db, clock, { projectBatch: 700 });
    expect(await next.resume(60_000)).toBe(0);
    expect(await next.resume(0)).toBe(n - 700);
    expect(await granted()).toBe(n);
    expect(await jobs()).toBe(0);
  });

  it('plan targets added and removed: the plan’s members gain and lose them', async () => {
    const { t, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    await drain();
    const extra = await createTarget(t, { kind: 'guild', target_name: 'Another server', on_expiry: 'kick' });
    await grant(t, plan.plan_id, extra.target_id);
    expect(await drain()).toBe(1);
    expect(pick(await row(t, m.user_id, extra.target_id))).toStrictEqual({ desired: 'granted', state: 'pending', applied: null, attempts: 0 });
    await applied(t);
    await patch(t, `/plans/${plan.plan_id}/targets/${extra.target_id}`, {}, 'DELETE');
    expect(await drain()).toBe(1);
    expect(pick(await row(t, m.user_id, extra.target_id))).toStrictEqual({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 });
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'granted', state: 'synced', applied: 'granted', attempts: 1 });
  });

  it('a member moved to another plan loses what only the old plan granted and gains the new plan’s targets', async () => {
    const { t, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    const other = await createPlan(t, { plan_name: 'Silver' });
    const silver = await createTarget(t, { target_name: 'Silver role' });
    await grant(t, other.plan_id, silver.target_id);
    await drain();
    await applied(t);
    await h.database.db.execute(sql`UPDATE memberships SET plan_id = ${other.plan_id} WHERE id = ${m.membership_id}`);
    expect(await store().planUsers(t.projectId, [m.user_id])).toBe(2);
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 });
    expect(pick(await row(t, m.user_id, silver.target_id))).toStrictEqual({ desired: 'granted', state: 'pending', applied: null, attempts: 0 });
  });

  it('target deleted: revoked with the on_expiry copied at the last plan', async () => {
    const { t, plan } = await setup();
    const kept = await createTarget(t, { kind: 'guild', target_name: 'Kicks', on_expiry: 'kick' });
    await grant(t, plan.plan_id, kept.target_id);
    const m = await member(t, plan.plan_id);
    await drain();
    await applied(t);
    await patch(t, `/targets/${kept.target_id}`, {}, 'DELETE');
    expect(await drain()).toBe(1);
    const r = await row(t, m.user_id, kept.target_id);
    expect({ ...pick(r), on_expiry: r?.on_expiry, external_id: r?.external_id }).toStrictEqual({
      desired: 'revoked',
      state: 'pending',
      applied: 'granted',
      attempts: 0,
      on_expiry: 'kick',
      external_id: kept.external_id,
    });
  });

  it('target disabled: revoked from every member; enabled again: granted', async () => {
    const { t, role, plan } = await setup();
    const [m, n] = [await member(t, plan.plan_id), await member(t, plan.plan_id)];
    await drain();
    await applied(t);
    await patch(t, `/targets/${role.target_id}`, { is_enabled: false });
    expect(await drain()).toBe(2);
    expect((await rows(t)).map(pick)).toStrictEqual(Array(2).fill({ desired: 'revoked', state: 'pending', applied: 'granted', attempts: 0 }));
    await patch(t, `/targets/${role.target_id}`, { is_enabled: true });
    expect(await drain()).toBe(2);
    expect((await rows(t)).map(pick)).toStrictEqual(Array(2).fill({ desired: 'granted', state: 'synced', applied: 'granted', attempts: 0 }));
    expect([m.user_id, n.user_id].sort()).toStrictEqual((await rows(t)).map((r) => r.user_id));
  });

  it('on_expiry changed: a revoke left undone under none is done under remove_role, and dropped when set back; granted rows keep their state', async () => {
    const { t, role, plan } = await setup();
    await patch(t, `/targets/${role.target_id}`, { on_expiry: 'none' });
    const [gone, active] = [await member(t, plan.plan_id), await member(t, plan.plan_id)];
    await drain();
    await applied(t);
    await patch(t, `/memberships/${gone.membership_id}`, {}, 'DELETE');
    await drain();
    // Revoked under none: nothing to take back, no call.
    expect(pick(await row(t, gone.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'synced', applied: 'granted', attempts: 0 });
    await patch(t, `/targets/${role.target_id}`, { on_expiry: 'remove_role' });
    expect(await drain()).toBe(2);
    expect({ ...pick(await row(t, gone.user_id, role.target_id)), on_expiry: (await row(t, gone.user_id, role.target_id))?.on_expiry }).toStrictEqual({
      desired: 'revoked',
      state: 'pending',
      applied: 'granted',
      attempts: 0,
      on_expiry: 'remove_role',
    });
    const granted = await row(t, active.user_id, role.target_id);
    expect({ ...pick(granted), on_expiry: granted?.on_expiry }).toStrictEqual({
      desired: 'granted',
      state: 'synced',
      applied: 'granted',
      attempts: 1,
      on_expiry: 'remove_role',
    });
    await patch(t, `/targets/${role.target_id}`, { on_expiry: 'none' });
    await drain();
    expect(pick(await row(t, gone.user_id, role.target_id))).toStrictEqual({ desired: 'revoked', state: 'synced', applied: 'granted', attempts: 0 });
  });

  it('an unhealthy target’s new grants wait as failed with its error, without a call', async () => {
    const { t, role, plan } = await setup();
    const error = { code: '50013', message: 'Missing Permissions' };
    await h.database.db.execute(sql`UPDATE targets SET health = 'unhealthy', health_error = ${JSON.stringify(error)}::jsonb WHERE id = ${role.target_id}`);
    const m = await member(t, plan.plan_id);
    await drain();
    const r = await row(t, m.user_id, role.target_id);
    expect({ ...pick(r), last_error: r?.last_error }).toStrictEqual({ desired: 'granted', state: 'failed', applied: null, attempts: 0, last_error: error });
    const generation = rowsOf<{ failed_generation: number }>(
      await h.database.db.execute(sql`SELECT failed_generation FROM access WHERE project_id = ${t.projectId}`),
    );
    expect(generation).toStrictEqual([{ failed_generation: 1 }]);
  });

  it('rows whose desired did not change are not written by a re-plan of the whole project', async () => {
    const { t, plan } = await setup();
    for (let i = 0; i < 5; i++) await member(t, plan.plan_id);
    await drain();
    await applied(t);
    const versions = async () =>
      rowsOf<{ user_id: string; v: string; updated_at: string }>(
        await h.database.db.execute(sql`SELECT user_id, xmin::text AS v, updated_at::text FROM access WHERE project_id = ${t.projectId} ORDER BY user_id`),
      );
    const before = await versions();
    expect(before).toHaveLength(5);
    expect(await store().planProject(t.projectId)).toBe(0);
    // A plan change that does not touch its targets re-plans the project too: still no write.
    await patch(t, `/plans/${plan.plan_id}`, { plan_name: 'Renamed' });
    expect(await drain()).toBe(0);
    expect(await versions()).toStrictEqual(before);
  });

  it('a deleted plan’s members keep their access until they end', async () => {
    const { t, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    await drain();
    await patch(t, `/plans/${plan.plan_id}`, {}, 'DELETE');
    expect(await drain()).toBe(0);
    expect((await row(t, m.user_id, role.target_id))?.desired).toBe('granted');
  });

  it('a disconnected platform’s rows are left as they are (disconnecting strips nobody)', async () => {
    const { t, role, plan } = await setup();
    const m = await member(t, plan.plan_id);
    await drain();
    await h.database.db.execute(sql`DELETE FROM integrations WHERE project_id = ${t.projectId}`);
    await patch(t, `/memberships/${m.membership_id}`, {}, 'DELETE');
    expect(await drain()).toBe(0);
    expect(pick(await row(t, m.user_id, role.target_id))).toStrictEqual({ desired: 'granted', state: 'pending', applied: null, attempts: 0 });
  });

  it('two planners at once plan each event once, and agree on the result', async () => {
    const projects = await Promise.all([setup(), setup()]);
    const members: { t: Tenant; user: string }[] = [];
    for (const { t, plan } of projects) {
      for (let i = 0; i < 30; i++) members.push({ t, user: (await member(t, plan.plan_id)).user_id });
    }
    await drain();
    // Then a change per member for the two planners to race on: a ban for a third, an extend for the rest.
    for (const [i, { t, user }] of members.entries()) {
      if (i % 3 === 0) await patch(t, `/ban/${user}`, {}, 'PUT');
      else await patch(t, `/memberships/${user}/extend`, { extend: new Date(clock.now().getTime() + 20 * DAY).toISOString() });
    }
    const total = rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM event_plan_queue`))[0]!.n;
    const one = new AccessPlanStore(h.database.db, clock);
    const two = new AccessPlanStore(h.database.db, clock);
    const run = async (planner: AccessPlanStore) => {
      let events = 0;
      for (;;) {
        const batch = await planner.planBatch(7);
        events += batch.events;
        if (batch.events === 0) return events;
      }
    };
    const [a, b] = await Promise.all([run(one), run(two)]);
    expect(a + b).toBe(total);
    if (onPostgres) expect(Math.min(a, b)).toBeGreaterThan(0);
    for (const { t } of projects) {
      const byDesired = (await rows(t)).reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.desired]: (acc[r.desired] ?? 0) + 1 }), {});
      expect(byDesired).toStrictEqual({ granted: 20, revoked: 10 });
    }
  });
});


describe('the worker runtime’s planner', () => {
  const h = useHarness();

  it('plans a committed change in-process within moments, woken by the events topic (not its 5 s poll)', async () => {
    const runtime = await startWorkerRuntime(h.container, { sweepIntervalMs: 60_000, pollMs: 60_000 });
    const polledAt = Date.now() + PLAN_POLL_MS; // the planner's first poll after its start-up pass
    try {
      const t = await h.tenant();
      await h.database.db.execute(sql`
        INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name)
        VALUES (${t.projectId}, 'discord', 'v1.dummy.sealed', ${String(randomInt(1, 2 ** 47))}, 'tenure-bot')`);
      const role = await createTarget(t);
      const plan = await createPlan(t);
      await grant(t, plan.plan_id, role.target_id);
      // Let the start-up pass and the catalogue's events go by, so the member's event needs a wake-up.
      await runtime.planner.idle();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      const m = await createMembership(t, { planId: plan.plan_id });
      await eventually(async () => {
        const rows = rowsOf<{ desired: string }>(
          await h.database.db.execute(sql`SELECT desired FROM access WHERE project_id = ${t.projectId} AND user_id = ${m.user_id}`),
        );
        return rows[0]?.desired === 'granted';
      }, 'the member granted by the runtime’s planner');
      // Planned before the first poll could have done it: the wake-up did.
      expect(Date.now(), `created ${polledAt - started} ms before the first poll`).toBeLessThan(polledAt);
    } finally {
      await runtime.stop();
    }
  });
});
