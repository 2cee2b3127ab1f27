import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { AccessReconcileStore, type ListedMember } from '../../src/store/access-reconcile.store.js';
import { accessRows, insertAccess, insertGuild, insertIntegration, insertRole, snowflake, targetHealth, type SeededTarget } from '../support/access-seed.js';
import { onPostgres, useHarness, type Tenant } from '../support/harness.js';

/**
 * Drift repair's SQL on both storages (src/store/access-reconcile.store.ts): a page of the member
 * list against the rows of those members in one statement, absent members in one anti-join, the
 * guard against rows newer than the list, and a refused list's flag on the guild target. The
 * whole comparison against the fake Discord is test/access/reconcile.test.ts.
 */

const h = useHarness();

interface World {
  t: Tenant;
  store: AccessReconcileStore;
  guild: SeededTarget;
  role: SeededTarget;
}

async function world(o: { guildOnExpiry?: 'kick' | 'none' } = {}): Promise<World> {
  const t = await h.tenant();
  await insertIntegration(h, t.projectId);
  const guild = await insertGuild(h, t.projectId, { onExpiry: o.guildOnExpiry });
  const role = await insertRole(h, t.projectId, guild);
  // Seeded rows are a minute old: older than any list read from now on.
  return { t, store: new AccessReconcileStore(h.database.db), guild, role };
}

const age = (w: World) => h.database.db.execute(sql`UPDATE access SET updated_at = now() - interval '1 minute' WHERE project_id = ${w.t.projectId}`);
const stateOf = async (w: World, target: SeededTarget, userId: string) => {
  const row = (await accessRows(h, w.t.projectId)).find((r) => r.target_id === target.id && r.user_id === userId);
  return row && { desired: row.desired, applied: row.applied, state: row.state };
};

describe(`drift repair store (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('repairs each kind of drift of a page in one statement, and leaves the rest', async () => {
    const w = await world({ guildOnExpiry: 'kick' });
    const [lostRole, rejoinedWithout, rejoinedWith, handedBack, stillInside, fine, pending, failed, stranger] = Array.from({ length: 9 }, () => snowflake());
    await insertAccess(h, w.t.projectId, w.role, [
      { userId: lostRole!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: rejoinedWithout!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: rejoinedWith!, desired: 'granted', applied: null, state: 'waiting_for_member' },
      { userId: handedBack!, desired: 'revoked', applied: 'revoked', state: 'synced' },
      { userId: fine!, desired: 'granted', applied: 'granted', state: 'synced' },
      // A call is coming for it anyway, or it waits for its target: not compared.
      { userId: pending!, desired: 'granted', applied: null, state: 'pending' },
      { userId: failed!, desired: 'granted', applied: null, state: 'failed' },
    ]);
    await insertAccess(h, w.t.projectId, w.guild, [{ userId: stillInside!, desired: 'revoked', applied: 'revoked', state: 'synced' }]);
    await age(w);
    const r = w.role.externalId;
    const page: ListedMember[] = [
      { id: lostRole!, roles: [] },
      { id: rejoinedWithout!, roles: [] },
      { id: rejoinedWith!, roles: [r] },
      { id: handedBack!, roles: [r, snowflake()] },
      { id: stillInside!, roles: [] },
      { id: fine!, roles: [r] },
      { id: pending!, roles: [] },
      { id: failed!, roles: [] },
      { id: stranger!, roles: [r] },
    ];
    const seenAt = await w.store.now();

    expect(await w.store.repairPage(w.t.projectId, w.guild.externalId, page, seenAt)).toStrictEqual({ regrant: 1, rejoined: 2, revoke: 2 });

    expect(await stateOf(w, w.role, lostRole!)).toStrictEqual({ desired: 'granted', applied: 'revoked', state: 'pending' });
    expect(await stateOf(w, w.role, rejoinedWithout!)).toStrictEqual({ desired: 'granted', applied: 'revoked', state: 'pending' });
    expect(await stateOf(w, w.role, rejoinedWith!)).toStrictEqual({ desired: 'granted', applied: 'granted', state: 'synced' });
    expect(await stateOf(w, w.role, handedBack!)).toStrictEqual({ desired: 'revoked', applied: 'granted', state: 'pending' });
    expect(await stateOf(w, w.guild, stillInside!)).toStrictEqual({ desired: 'revoked', applied: 'granted', state: 'pending' });
    expect(await stateOf(w, w.role, fine!)).toStrictEqual({ desired: 'granted', applied: 'granted', state: 'synced' });
    expect(await stateOf(w, w.role, pending!)).toStrictEqual({ desired: 'granted', applied: null, state: 'pending' });
    expect(await stateOf(w, w.role, failed!)).toStrictEqual({ desired: 'granted', applied: null, state: 'failed' });
    expect(await stateOf(w, w.role, stranger!)).toBeUndefined();
    // The repaired rows are due now, their attempts counted afresh.
    const due = (await accessRows(h, w.t.projectId)).filter((x) => x.state === 'pending' && x.user_id !== pending);
    expect(due.map((x) => x.attempts)).toStrictEqual([0, 0, 0, 0]);
  });

  it('leaves a row written after the list was read, a role whose on_expiry is none, and a deleted target', async () => {
    const w = await world();
    const keepRole = await insertRole(h, w.t.projectId, w.guild, { onExpiry: 'none' });
    const deleted = await insertRole(h, w.t.projectId, w.guild);
    const [fresh, kept, former] = [snowflake(), snowflake(), snowflake()];
    await insertAccess(h, w.t.projectId, w.role, [{ userId: fresh, desired: 'granted', applied: 'granted', state: 'synced' }]);
    await insertAccess(h, w.t.projectId, keepRole, [{ userId: kept, desired: 'revoked', applied: 'revoked', state: 'synced' }]);
    await insertAccess(h, w.t.projectId, deleted, [{ userId: former, desired: 'revoked', applied: 'revoked', state: 'synced' }]);
    // The owner deleted that role target: the role is not tenure's any more, whoever holds it.
    await h.database.db.execute(sql`DELETE FROM targets WHERE id = ${deleted.id}`);
    await age(w);
    const seenAt = await w.store.now();
    // The worker applies the row after the list was read: the list is older than the row.
    await h.database.db.execute(sql`UPDATE access SET updated_at = now() + interval '1 second' WHERE user_id = ${fresh}`);

    const page = [
      { id: fresh, roles: [] },
      { id: kept, roles: [keepRole.externalId] },
      { id: former, roles: [deleted.externalId] },
    ];
    expect(await w.store.repairPage(w.t.projectId, w.guild.externalId, page, seenAt)).toStrictEqual({ regrant: 0, rejoined: 0, revoke: 0 });
    expect(await w.store.markAbsent(w.t.projectId, w.guild.externalId, [], seenAt)).toBe(0);
    expect(await stateOf(w, w.role, fresh)).toMatchObject({ state: 'synced' });
    expect(await stateOf(w, deleted, former)).toMatchObject({ state: 'synced', applied: 'revoked' });
  });

  it('puts granted rows of members missing from every page to waiting, with one anti-join over the guild', async () => {
    const w = await world();
    const otherGuild = await insertGuild(h, w.t.projectId);
    const otherRole = await insertRole(h, w.t.projectId, otherGuild);
    const present = Array.from({ length: 3 }, () => snowflake());
    const [gone, goneRevoked, elsewhere] = [snowflake(), snowflake(), snowflake()];
    await insertAccess(h, w.t.projectId, w.role, [
      ...present.map((userId) => ({ userId, desired: 'granted' as const, applied: 'granted' as const, state: 'synced' as const })),
      { userId: gone, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: goneRevoked, desired: 'revoked', applied: 'revoked', state: 'synced' },
    ]);
    // Another guild's row: not this guild's list to judge.
    await insertAccess(h, w.t.projectId, otherRole, [{ userId: elsewhere, desired: 'granted', applied: 'granted', state: 'synced' }]);
    await age(w);

    expect(await w.store.markAbsent(w.t.projectId, w.guild.externalId, present, await w.store.now())).toBe(1);
    expect(await stateOf(w, w.role, gone)).toStrictEqual({ desired: 'granted', applied: null, state: 'waiting_for_member' });
    expect(await stateOf(w, w.role, goneRevoked)).toMatchObject({ state: 'synced' });
    expect(await stateOf(w, otherRole, elsewhere)).toMatchObject({ state: 'synced' });
    for (const u of present) expect(await stateOf(w, w.role, u)).toMatchObject({ state: 'synced' });
  });

  it('names the guilds of the targets, flags a refused list on the guild target and clears it, retrying its failed rows', async () => {
    const w = await world();
    const other = await insertGuild(h, w.t.projectId);
    expect(await w.store.guilds(w.t.projectId)).toStrictEqual([w.guild.externalId, other.externalId].sort());

    await w.store.markGuildUnhealthy(w.t.projectId, w.guild.externalId, { code: '50001', message: 'Missing Access' });
    expect(await targetHealth(h, w.guild.id)).toStrictEqual({ health: 'unhealthy', health_error: { code: '50001', message: 'Missing Access' } });
    expect(await targetHealth(h, w.role.id)).toMatchObject({ health: 'ok' });
    const member = snowflake();
    await insertAccess(h, w.t.projectId, w.guild, [{ userId: member, desired: 'granted', state: 'failed' }]);

    await w.store.clearGuildListingError(w.t.projectId, w.guild.externalId);
    expect(await targetHealth(h, w.guild.id)).toStrictEqual({ health: 'ok', health_error: null });
    expect(await stateOf(w, w.guild, member)).toMatchObject({ state: 'pending' });

    // Another cause of ill health (the worker's 50013) is not the list's to clear.
    await h.database.db.execute(sql`UPDATE targets SET health = 'unhealthy', health_error = '{"code":"50013","message":"Missing Permissions"}' WHERE id = ${w.guild.id}`);
    await w.store.clearGuildListingError(w.t.projectId, w.guild.externalId);
    expect(await targetHealth(h, w.guild.id)).toMatchObject({ health: 'unhealthy', health_error: { code: '50013' } });
  });

  it('finds bots due for a comparison: held by this owner, healthy, never compared or long enough ago', async () => {
    const store = new AccessReconcileStore(h.database.db);
    const now = new Date();
    const seed = async (o: { owner: string | null; reconciledMinutesAgo: number | null; health?: 'ok' | 'unhealthy' }) => {
      const t = await h.tenant();
      await insertIntegration(h, t.projectId, { health: o.health });
      await h.database.db.execute(sql`
        UPDATE integrations SET lease_owner = ${o.owner}, lease_expires_at = now() + interval '1 minute',
          reconciled_at = CASE WHEN ${o.reconciledMinutesAgo}::int IS NULL THEN NULL ELSE now() - make_interval(mins => ${o.reconciledMinutesAgo}::int) END
        WHERE project_id = ${t.projectId}`);
      return t.projectId;
    };
    const never = await seed({ owner: 'me', reconciledMinutesAgo: null });
    const old = await seed({ owner: 'me', reconciledMinutesAgo: 20 });
    await seed({ owner: 'me', reconciledMinutesAgo: 1 });
    await seed({ owner: 'someone else', reconciledMinutesAgo: null });
    await seed({ owner: 'me', reconciledMinutesAgo: null, health: 'unhealthy' });

    const due = await store.due('me', now, 10 * 60_000);
    expect(due.map((d) => d.projectId)).toStrictEqual([never, old]);
    await store.markReconciled(never, now);
    expect((await store.due('me', now, 10 * 60_000)).map((d) => d.projectId)).toStrictEqual([old]);
  });
});
