import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccessCompletions, type AccessCompletion } from '../../src/domain/access/access-completions.js';
import { AccessWorkerStore } from '../../src/store/access-worker.store.js';
import { BotLeasesStore, type IntegrationKey } from '../../src/store/bot-leases.store.js';
import { eventRows } from '../support/api.js';
import {
  accessRows,
  insertAccess,
  insertGuild,
  insertIntegration,
  insertRole,
  integrationRow,
  snowflake,
  targetHealth,
  type SeededTarget,
} from '../support/access-seed.js';
import { createHarness, onPostgres, type Harness } from '../support/harness.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * The access worker's store on both storages: one holder of a bot's lease at a time, taken over
 * once it runs out, and every write of a stale holder refused; claims in a stable order; each
 * outcome of a call written with its event in one statement. Driven by a manual clock that starts
 * ahead of the database's (rows the database stamps now() are due for it).
 */

const SECOND = 1000;
const LEASE = 30 * SECOND;
/** In a fixed order, whatever order the statement wrote them in. */
const sorted = <T>(items: T[]): T[] => [...items].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));

describe(`access worker store (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let h: Harness;
  let clock: ManualClock;
  let store: AccessWorkerStore;
  let leases: BotLeasesStore;
  let completions: AccessCompletions;
  beforeAll(async () => {
    clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
    h = await createHarness({ clock });
    store = new AccessWorkerStore(h.database.db);
    leases = new BotLeasesStore(h.database.db);
    completions = new AccessCompletions(h.container.transactor);
  });
  afterAll(() => h.close());
  beforeEach(() => h.reset());

  const until = (ms = LEASE) => new Date(clock.now().getTime() + ms);
  const acquire = (owner: string, limit = 10, reconcileEveryMs: number | null = null) =>
    leases.acquire({ owner, platform: 'discord', now: clock.now(), until: until(), limit, reconcileEveryMs });

  /** A project with a connected bot and a role target whose rows are given. */
  async function project(users: string[] = [snowflake()]) {
    const t = await h.tenant();
    await insertIntegration(h, t.projectId);
    const guild = await insertGuild(h, t.projectId);
    const role = await insertRole(h, t.projectId, guild);
    await insertAccess(h, t.projectId, role, users.map((userId) => ({ userId, desired: 'granted' as const })));
    const key: IntegrationKey = { projectId: t.projectId, platform: 'discord' };
    return { t, key, guild, role, users };
  }

  describe('leases', () => {
    it('lets one owner hold a bot at a time, hands it over once the lease runs out, and fences off the stale holder', async () => {
      const { key, role, users } = await project();
      const a = await acquire('worker-a');
      expect(a.map((x) => x.projectId)).toStrictEqual([key.projectId]);
      expect(a[0]).toMatchObject({ platform: 'discord', botTokenSealed: 'sealed', generation: 1 });
      expect(await acquire('worker-b')).toStrictEqual([]);
      expect(await integrationRow(h, key.projectId)).toMatchObject({ lease_owner: 'worker-a' });

      // A holds it: it claims; B cannot claim for a bot it does not hold.
      const claimedByA = await store.claim({ owner: 'worker-a', key, now: clock.now(), until: until(), limit: 10 });
      expect(claimedByA.map((r) => r.userId)).toStrictEqual(users);
      await insertAccess(h, key.projectId, role, [{ userId: snowflake(), desired: 'granted' }]);
      expect(await store.claim({ owner: 'worker-b', key, now: clock.now(), until: until(), limit: 10 })).toStrictEqual([]);

      // Renewing keeps it; once A stops renewing and the lease runs out, B takes it over.
      clock.advance(LEASE - 1);
      expect((await leases.renew('worker-a', [key], clock.now(), until())).map((x) => x.projectId)).toStrictEqual([key.projectId]);
      clock.advance(LEASE - 1);
      expect(await acquire('worker-b')).toStrictEqual([]);
      clock.advance(1);
      expect((await acquire('worker-b')).map((x) => x.projectId)).toStrictEqual([key.projectId]);

      // A, back from a stall, renews nothing, claims nothing, records nothing, releases nothing.
      expect(await leases.renew('worker-a', [key], clock.now(), until())).toStrictEqual([]);
      expect(await store.claim({ owner: 'worker-a', key, now: clock.now(), until: until(), limit: 10 })).toStrictEqual([]);
      const late = await completions.record('worker-a', key, clock.now(), [
        { targetId: role.id, userId: users[0]!, desired: 'granted', outcome: 'failed', targetFault: true, error: { code: '50013', message: 'Missing Permissions' } },
        { targetId: role.id, userId: users[0]!, desired: 'granted', outcome: 'unauthorized', error: { code: 'unauthorized', message: 'x' } },
      ]);
      expect(late).toStrictEqual({ recorded: new Set(), cascaded: 0, unhealthyTargets: [], held: false });
      expect(await leases.release('worker-a', [key], clock.now())).toBe(0);
      expect(await integrationRow(h, key.projectId)).toMatchObject({ lease_owner: 'worker-b', health: 'ok', last_error: null });
      expect(await targetHealth(h, role.id)).toStrictEqual({ health: 'ok', health_error: null });
      expect((await accessRows(h, key.projectId)).map((r) => r.state)).toStrictEqual(['pending', 'pending']);
      expect(await eventRows(h, key.projectId)).toStrictEqual([]);

      // B's rows: A's claimed row is due again when A's claim lease ends (already, here), the other at once.
      const claimedByB = await store.claim({ owner: 'worker-b', key, now: clock.now(), until: until(), limit: 10 });
      expect(claimedByB).toHaveLength(2);
      expect(claimedByB.find((r) => r.userId === users[0])?.attempt).toBe(2);
    });

    it('acquires only healthy bots with work (a due pending row, or a due comparison when asked), up to the limit', async () => {
      const idle = await h.tenant();
      await insertIntegration(h, idle.projectId, { reconciledAt: clock.now() });
      const broken = await h.tenant();
      await insertIntegration(h, broken.projectId, { health: 'unhealthy' });
      const g = await insertGuild(h, broken.projectId);
      await insertAccess(h, broken.projectId, g, [{ userId: snowflake(), desired: 'granted' }]);
      const later = await h.tenant();
      await insertIntegration(h, later.projectId, { reconciledAt: clock.now() });
      const lg = await insertGuild(h, later.projectId);
      await insertAccess(h, later.projectId, lg, [{ userId: snowflake(), desired: 'granted', nextAttemptAt: until(60 * SECOND) }]);
      const busy1 = await project();
      const busy2 = await project();

      const got = await acquire('w', 1);
      expect(got).toHaveLength(1);
      const rest = await acquire('w', 10);
      expect(new Set([...got, ...rest].map((x) => x.projectId))).toStrictEqual(new Set([busy1.key.projectId, busy2.key.projectId]));

      // Ten minutes on, the two leases have run out and a comparison is due for the two idle bots:
      // all four are taken when comparisons are asked for; never the unhealthy one.
      clock.advance(10 * 60_000);
      const forReconcile = await acquire('w', 10, 5 * 60_000);
      expect(new Set(forReconcile.map((x) => x.projectId))).toStrictEqual(
        new Set([idle.projectId, later.projectId, busy1.key.projectId, busy2.key.projectId]),
      );
    });

    it('gives leases back with the rows a stopping worker did not finish due at once', async () => {
      const { key } = await project([snowflake(), snowflake()]);
      await acquire('w');
      const claimed = await store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 10 });
      expect(claimed).toHaveLength(2);
      const abandoned = claimed.slice(0, 1).map((r) => ({ projectId: key.projectId, targetId: r.targetId, userId: r.userId }));
      expect(await leases.release('w', [key], clock.now(), abandoned)).toBe(1);
      expect(await integrationRow(h, key.projectId)).toMatchObject({ lease_owner: null, lease_expires_at: null });
      const rows = await accessRows(h, key.projectId);
      expect(rows.find((r) => r.user_id === claimed[0]!.userId)?.next_attempt_at).toBe(clock.now().toISOString());
      expect(rows.find((r) => r.user_id === claimed[1]!.userId)?.next_attempt_at).toBe(until().toISOString());
    });

    it('lets two workers acquiring at once take different bots', async () => {
      const projects = await Promise.all(Array.from({ length: 6 }, () => project()));
      const [a, b] = await Promise.all([acquire('a', 3), acquire('b', 3)]);
      const all = [...a!, ...b!].map((x) => x.projectId);
      expect(new Set(all).size).toBe(all.length);
      expect(all.length).toBeGreaterThanOrEqual(3);
      const left = await acquire('c', 10);
      expect(new Set([...all, ...left.map((x) => x.projectId)])).toStrictEqual(new Set(projects.map((p) => p.key.projectId)));
    });
  });

  describe('claims', () => {
    it('takes due rows oldest first, ties by member and target, skipping unhealthy targets, rows in hand and future rows', async () => {
      const t = await h.tenant();
      const key: IntegrationKey = { projectId: t.projectId, platform: 'discord' };
      await insertIntegration(h, t.projectId);
      const guild = await insertGuild(h, t.projectId);
      const [r1, r2] = [await insertRole(h, t.projectId, guild), await insertRole(h, t.projectId, guild)].sort((x, y) => x.id.localeCompare(y.id));
      const sick = await insertRole(h, t.projectId, guild);
      const base = clock.now().getTime() - 60 * SECOND;
      const at = (s: number) => new Date(base + s * SECOND);
      const [u1, u2, u3] = ['100000000000000001', '100000000000000002', '100000000000000003'];
      await insertAccess(h, t.projectId, r2!, [
        { userId: u1!, desired: 'granted', nextAttemptAt: at(1) },
        { userId: u2!, desired: 'revoked', applied: 'granted', nextAttemptAt: at(2) },
      ]);
      await insertAccess(h, t.projectId, r1!, [
        { userId: u2!, desired: 'granted', nextAttemptAt: at(2) },
        { userId: u1!, desired: 'granted', nextAttemptAt: at(2) },
        { userId: u3!, desired: 'granted', nextAttemptAt: at(3) },
        { userId: snowflake(), desired: 'granted', nextAttemptAt: until(60 * SECOND) },
        { userId: snowflake(), desired: 'granted', state: 'failed' },
      ]);
      await insertAccess(h, t.projectId, sick, [{ userId: u1!, desired: 'granted', nextAttemptAt: at(0) }]);
      await h.database.db.execute(sql`UPDATE targets SET health = 'unhealthy' WHERE id = ${sick.id}`);
      await acquire('w');
      const first = await store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 3, inHand: [{ targetId: r1!.id, userId: u1! }] });
      expect(first.map((r) => [r.targetId, r.userId])).toStrictEqual([
        [r2!.id, u1],
        [r1!.id, u2],
        [r2!.id, u2],
      ]);
      expect(first[2]).toStrictEqual({
        targetId: r2!.id,
        userId: u2,
        kind: 'role',
        externalId: r2!.externalId,
        guildId: guild.externalId,
        onExpiry: 'remove_role',
        desired: 'revoked',
        applied: 'granted',
        attempt: 1,
        // Rows written directly, with no membership or ban behind them.
        membershipId: null,
        banned: false,
      });
      const second = await store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 10 });
      expect(second.map((r) => [r.targetId, r.userId])).toStrictEqual([
        [r1!.id, u1],
        [r1!.id, u3],
      ]);
      expect(await store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 10 })).toStrictEqual([]);
      const rows = await accessRows(h, t.projectId);
      expect(rows.filter((r) => r.attempts === 1)).toHaveLength(5);
      expect(rows.filter((r) => r.attempts === 1).every((r) => r.next_attempt_at === until().toISOString())).toBe(true);
    });

    it('spreads a claim over targets, counting the rows in hand, and leaves guilds that are rate limited', async () => {
      const t = await h.tenant();
      const key: IntegrationKey = { projectId: t.projectId, platform: 'discord' };
      await insertIntegration(h, t.projectId);
      const busyGuild = await insertGuild(h, t.projectId);
      const busy = await insertRole(h, t.projectId, busyGuild);
      const quietGuild = await insertGuild(h, t.projectId);
      const quiet = await insertRole(h, t.projectId, quietGuild);
      const limitedGuild = await insertGuild(h, t.projectId);
      const limited = await insertRole(h, t.projectId, limitedGuild);
      const old = new Date(clock.now().getTime() - 60 * SECOND);
      // The busy target's backlog is older: without the cap it would fill every claim.
      await insertAccess(h, t.projectId, busy, Array.from({ length: 20 }, () => ({ userId: snowflake(), desired: 'granted' as const, nextAttemptAt: old })));
      await insertAccess(h, t.projectId, quiet, [{ userId: snowflake(), desired: 'granted' }, { userId: snowflake(), desired: 'granted' }]);
      await insertAccess(h, t.projectId, limited, [{ userId: snowflake(), desired: 'granted' }]);
      await insertAccess(h, t.projectId, limitedGuild, [{ userId: snowflake(), desired: 'granted' }]);
      await acquire('w');
      const claim = (inHand: { targetId: string; userId: string }[]) =>
        store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 10, perTarget: 3, inHand, skipGuilds: [limitedGuild.externalId] });
      const first = await claim([]);
      const count = (rows: { targetId: string }[], target: SeededTarget) => rows.filter((r) => r.targetId === target.id).length;
      expect([count(first, busy), count(first, quiet), count(first, limited), count(first, limitedGuild)]).toStrictEqual([3, 2, 0, 0]);
      // Two of the busy target's rows still in hand: one more of it at most.
      const second = await claim(first.filter((r) => r.targetId === busy.id).slice(0, 2));
      expect(second.map((r) => r.targetId)).toStrictEqual([busy.id]);
      // With fill, the room the cap leaves goes to more rows of the same targets (a one-target burst claims a round at a time).
      const inHand = [...first, ...second];
      const filled = await store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 10, perTarget: 3, fill: true, inHand, skipGuilds: [limitedGuild.externalId] });
      expect(filled.map((r) => r.targetId)).toStrictEqual(Array.from({ length: 10 }, () => busy.id));
    });
  });

  describe('completions', () => {
    /** Claims every due row of the project for `w` and returns a completion maker. */
    async function claimAll(key: IntegrationKey) {
      await acquire('w');
      const claimed = await store.claim({ owner: 'w', key, now: clock.now(), until: until(), limit: 100 });
      const of = (target: SeededTarget, userId: string) => {
        const row = claimed.find((r) => r.targetId === target.id && r.userId === userId);
        if (!row) throw new Error(`not claimed: ${userId}`);
        return { targetId: row.targetId, userId: row.userId, desired: row.desired };
      };
      return { claimed, of };
    }

    it('records grants and revokes as synced with their events, in one statement', async () => {
      const t = await h.tenant();
      const key: IntegrationKey = { projectId: t.projectId, platform: 'discord' };
      await insertIntegration(h, t.projectId);
      const guild = await insertGuild(h, t.projectId, { onExpiry: 'kick' });
      const role = await insertRole(h, t.projectId, guild);
      const [u1, u2, u3] = [snowflake(), snowflake(), snowflake()];
      await insertAccess(h, t.projectId, role, [
        { userId: u1, desired: 'granted' },
        { userId: u2, desired: 'revoked', applied: 'granted' },
      ]);
      await insertAccess(h, t.projectId, guild, [{ userId: u3, desired: 'revoked', applied: 'granted' }]);
      const { of } = await claimAll(key);
      const result = await completions.record('w', key, clock.now(), [
        { ...of(role, u1), outcome: 'applied' },
        { ...of(role, u2), outcome: 'applied' },
        { ...of(guild, u3), outcome: 'applied' },
      ]);
      expect(result).toMatchObject({ held: true, cascaded: 0, unhealthyTargets: [] });
      expect(result.recorded.size).toBe(3);
      const rows = await accessRows(h, t.projectId);
      for (const r of rows) {
        expect(r).toMatchObject({ state: 'synced', applied: r.desired, last_error: null, attempts: 1, synced_at: clock.now().toISOString() });
      }
      const events = await eventRows(h, t.projectId);
      expect(sorted(events.map((e) => [e.type, e.data]))).toStrictEqual(
        sorted([
          ['access.granted', { user_id: u1, target_id: role.id, platform: 'discord' }],
          ['access.revoked', { user_id: u2, target_id: role.id, platform: 'discord' }],
          ['access.revoked', { user_id: u3, target_id: guild.id, platform: 'discord' }],
        ]),
      );
    });

    it('leaves a row whose desired changed while the call was out pending for the new desired, recording what the call did', async () => {
      const { t, key, role, users } = await project([snowflake(), snowflake()]);
      const { of } = await claimAll(key);
      const [raced, failedRaced] = users as [string, string];
      const done = [{ ...of(role, raced), outcome: 'applied' as const }, { ...of(role, failedRaced), outcome: 'retry' as const, error: { code: 'server_error', message: '502' }, nextAttemptAt: until(5_000) }];
      // The membership ended while the grants were out: the planner wants them revoked now.
      await h.database.db.execute(sql`UPDATE access SET desired = 'revoked', attempts = 0, next_attempt_at = now() WHERE project_id = ${t.projectId}`);
      const result = await completions.record('w', key, clock.now(), done);
      expect([...result.recorded]).toStrictEqual([`${role.id}:${raced}`]);
      const rows = await accessRows(h, t.projectId);
      expect(rows.find((r) => r.user_id === raced)).toMatchObject({ desired: 'revoked', applied: 'granted', state: 'pending', attempts: 0, synced_at: null, last_error: null });
      expect(rows.find((r) => r.user_id === raced)!.next_attempt_at).toBe(clock.now().toISOString());
      expect(rows.find((r) => r.user_id === failedRaced)).toMatchObject({ desired: 'revoked', applied: null, state: 'pending', attempts: 0, last_error: null });
      expect(await eventRows(h, t.projectId)).toStrictEqual([]);
    });

    it('fails a row whose target is at fault, flags the target, fails its other pending rows without a call, with access.failed each', async () => {
      const { t, key, role, users } = await project([snowflake(), snowflake(), snowflake()]);
      const other = await insertRole(h, t.projectId, (await insertGuild(h, t.projectId)));
      const bystander = snowflake();
      await insertAccess(h, t.projectId, other, [{ userId: bystander, desired: 'granted' }]);
      const { of } = await claimAll(key);
      const [hit, okBefore] = users as [string, string, string];
      const error = { code: '50013', message: 'Missing Permissions' };
      const result = await completions.record('w', key, clock.now(), [
        { ...of(role, okBefore), outcome: 'applied' },
        { ...of(role, hit), outcome: 'failed', targetFault: true, error },
      ]);
      expect(result).toMatchObject({ held: true, cascaded: 1, unhealthyTargets: [role.id] });
      expect(await targetHealth(h, role.id)).toStrictEqual({ health: 'unhealthy', health_error: error });
      expect(await targetHealth(h, other.id)).toStrictEqual({ health: 'ok', health_error: null });
      const rows = await accessRows(h, t.projectId);
      const state = (u: string) => rows.find((r) => r.user_id === u);
      expect(state(hit)).toMatchObject({ state: 'failed', last_error: error, failed_generation: 1 });
      expect(state(okBefore)).toMatchObject({ state: 'synced', applied: 'granted', last_error: null });
      expect(state(users[2]!)).toMatchObject({ state: 'failed', last_error: error, failed_generation: 1, attempts: 1 });
      expect(state(bystander)).toMatchObject({ state: 'pending' });
      const failed = (await eventRows(h, t.projectId)).filter((e) => e.type === 'access.failed').map((e) => e.data);
      expect(sorted(failed)).toStrictEqual(sorted([hit, users[2]!].map((u) => ({ user_id: u, target_id: role.id, platform: 'discord', error }))));
      // A row failed on its own (not the target's fault) leaves the target alone.
      const solo = snowflake();
      await insertAccess(h, t.projectId, other, [{ userId: solo, desired: 'granted' }]);
      const again = await claimAll(key);
      const own = { code: '50035', message: 'Invalid Form Body' };
      await completions.record('w', key, clock.now(), [{ ...again.of(other, solo), outcome: 'failed', targetFault: false, error: own }]);
      expect(await targetHealth(h, other.id)).toStrictEqual({ health: 'ok', health_error: null });
      expect((await accessRows(h, t.projectId)).find((r) => r.user_id === solo)).toMatchObject({ state: 'failed', last_error: own });
      expect((await accessRows(h, t.projectId)).find((r) => r.user_id === bystander)).toMatchObject({ state: 'pending' });
    });

    it('fails, with the target\u2019s error, a retry of the batch and a raced row of a target the batch blames', async () => {
      const { t, key, role, users } = await project([snowflake(), snowflake(), snowflake()]);
      const { of } = await claimAll(key);
      const [flaky, hit, raced] = users as [string, string, string];
      const error = { code: '10011', message: 'Unknown Role' };
      await h.database.db.execute(sql`UPDATE access SET desired = 'revoked', attempts = 0, next_attempt_at = now() WHERE user_id = ${raced}`);
      const result = await completions.record('w', key, clock.now(), [
        { ...of(role, flaky), outcome: 'retry', error: { code: 'server_error', message: '502' }, nextAttemptAt: until(1_000) },
        { ...of(role, hit), outcome: 'failed', targetFault: true, error },
        { ...of(role, raced), outcome: 'retry', error: { code: 'timeout', message: 'no answer' }, nextAttemptAt: until(1_000) },
      ]);
      expect(result).toMatchObject({ cascaded: 1, unhealthyTargets: [role.id] });
      expect((await accessRows(h, t.projectId)).map((r) => [r.user_id, r.state, r.last_error])).toStrictEqual(
        sorted(users).map((u) => [u, 'failed', error]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );
      expect((await eventRows(h, t.projectId)).filter((e) => e.type === 'access.failed')).toHaveLength(3);
    });

    it('records waiting for the member, a retry with its due time, a no-call revoke, and a refused token', async () => {
      const t = await h.tenant();
      const key: IntegrationKey = { projectId: t.projectId, platform: 'discord' };
      await insertIntegration(h, t.projectId);
      const guild = await insertGuild(h, t.projectId);
      const role = await insertRole(h, t.projectId, guild, { onExpiry: 'none' });
      const [absent, flaky, kept, refused] = [snowflake(), snowflake(), snowflake(), snowflake()];
      await insertAccess(h, t.projectId, guild, [{ userId: absent, desired: 'granted' }]);
      await insertAccess(h, t.projectId, role, [
        { userId: flaky, desired: 'granted' },
        { userId: kept, desired: 'revoked', applied: 'granted' },
        { userId: refused, desired: 'granted' },
      ]);
      const { of } = await claimAll(key);
      const retryAt = until(5 * SECOND);
      const batch: AccessCompletion[] = [
        { ...of(guild, absent), outcome: 'waiting_for_member', error: { code: '10007', message: 'Unknown Member' } },
        { ...of(role, flaky), outcome: 'retry', error: { code: 'server_error', message: 'Discord answered 502' }, nextAttemptAt: retryAt },
        { ...of(role, kept), outcome: 'unchanged' },
        { ...of(role, refused), outcome: 'unauthorized', error: { code: 'unauthorized', message: '401: Unauthorized' } },
      ];
      await completions.record('w', key, clock.now(), batch);
      const rows = await accessRows(h, t.projectId);
      const row = (u: string) => rows.find((r) => r.user_id === u)!;
      expect(row(absent)).toMatchObject({ state: 'waiting_for_member', applied: 'revoked', last_error: { code: '10007', message: 'Unknown Member' } });
      expect(row(flaky)).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: retryAt.toISOString(), last_error: { code: 'server_error' } });
      expect(row(kept)).toMatchObject({ state: 'synced', applied: 'granted', last_error: null });
      expect(row(refused)).toMatchObject({ state: 'pending', next_attempt_at: clock.now().toISOString(), last_error: { code: 'unauthorized' } });
      expect(await integrationRow(h, t.projectId)).toMatchObject({ health: 'unhealthy', last_error: { code: 'unauthorized', message: '401: Unauthorized' } });
      expect(await eventRows(h, t.projectId)).toStrictEqual([]);
      // An unhealthy bot is not renewed, nor acquired again until it is reconnected.
      expect(await leases.renew('w', [key], clock.now(), until())).toStrictEqual([]);
      await leases.release('w', [key], clock.now());
      expect(await acquire('w')).toStrictEqual([]);
    });
  });
});
