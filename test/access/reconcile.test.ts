import type { REST } from '@discordjs/rest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AccessWorker } from '../../src/access/access.worker.js';
import { discordConnector } from '../../src/access/discord/discord.connector.js';
import { Reconciler } from '../../src/access/reconciler.js';
import { AccessCompletions } from '../../src/domain/access/access-completions.js';
import { AccessWorkerStore } from '../../src/store/access-worker.store.js';
import { BotLeasesStore } from '../../src/store/bot-leases.store.js';
import { accessRows, targetHealth } from '../support/access-seed.js';
import { addBot, connectBot, type TestBot } from '../support/bots.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { fakeSnowflake, type FakeCall } from '../support/fake-discord.js';
import { future, useHarness, type Tenant } from '../support/harness.js';

/**
 * Drift repair (docs/access-discord.md "Drift repair") against the fake Discord through the real
 * @discordjs/rest: the app in process, the planner's store, the real access worker holding the
 * bot, and the reconciler reading each guild's member list with that worker's REST client. Each
 * case changes Discord behind tenure's back (a moderator's hand, a member leaving and coming back),
 * runs one comparison, lets the worker drain, and counts the calls on the fake. The guild has more
 * members than one page of the list (1,000), most of them people tenure does not manage.
 */

const h = useHarness({
  // The list and member-role buckets as Discord's global limit, so several comparisons in a row
  // never wait out a 10-second window (the buckets themselves are the worker's tests' concern).
  discord: { buckets: { listMembers: { limit: 50, windowMs: 1_000 }, memberRoles: { limit: 50, windowMs: 1_000 } } },
});

const ROLE_CALL = '/guilds/{guild.id}/members/{user.id}/roles/{role.id}';
const BYSTANDERS = 1_100;

const running: AccessWorker<REST>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop(0)));
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop(0)));
});

interface World {
  t: Tenant;
  bot: TestBot;
  guildId: string;
  roleId: string;
  guildTargetId: string;
  roleTargetId: string;
  planId: string;
  worker: AccessWorker<REST>;
  reconciler: Reconciler;
}

/**
 * A project whose plan grants one role of a guild (the guild target with `guildOnExpiry`), its bot
 * connected through the API, a worker holding it and a reconciler on that worker; the guild has
 * BYSTANDERS members tenure knows nothing of, one of them holding the managed role by hand.
 */
async function world(o: { guildOnExpiry?: 'kick' | 'none'; grantGuild?: boolean } = {}): Promise<World & { bystanderWithRole: string }> {
  const t = await h.tenant();
  const bot = addBot(h.discord);
  const guildId = fakeSnowflake();
  const roleId = fakeSnowflake();
  h.discord.addGuild({ id: guildId });
  h.discord.addRole(guildId, { id: roleId, position: 1 });
  const bystanders = Array.from({ length: BYSTANDERS }, () => fakeSnowflake());
  for (const u of bystanders) h.discord.addMember(guildId, u);
  const bystanderWithRole = bystanders[BYSTANDERS - 1]!;
  h.discord.setMemberRoles(guildId, bystanderWithRole, [roleId]);

  const guildTarget = await createTarget(t, { kind: 'guild', external_id: guildId, target_name: 'Guild', ...(o.guildOnExpiry ? { on_expiry: o.guildOnExpiry } : {}) });
  const roleTarget = await createTarget(t, { kind: 'role', external_id: roleId, parent_target_id: guildTarget.target_id });
  const plan = await createPlan(t);
  await grant(t, plan.plan_id, roleTarget.target_id);
  if (o.grantGuild) await grant(t, plan.plan_id, guildTarget.target_id);
  await connectBot(t, bot);

  const worker = new AccessWorker(
    {
      store: new AccessWorkerStore(h.database.db),
      completions: new AccessCompletions(h.container.transactor),
      leases: new BotLeasesStore(h.database.db),
      openToken: (sealed) => h.container.secretBox!.open(sealed),
      connector: discordConnector(h.discord.url),
      clock: h.container.clock,
      random: () => 0.5,
      logger: h.container.logger,
    },
    { concurrency: 8, leaseMs: 30_000, pollMs: 200, maxBots: 10, reconcileEveryMs: 0 },
  );
  running.push(worker);
  const reconciler = new Reconciler(
    {
      store: h.container.stores.accessReconcile,
      planProject: (projectId) => h.container.stores.accessPlan.planProject(projectId),
      bots: worker,
      clock: h.container.clock,
      logger: h.container.logger,
    },
    // Every comparison is due at once: each case runs one when it wants it.
    { everyMs: 0, tickMs: 60_000 },
  );
  return {
    t,
    bot,
    guildId,
    roleId,
    guildTargetId: guildTarget.target_id,
    roleTargetId: roleTarget.target_id,
    planId: plan.plan_id,
    worker,
    reconciler,
    bystanderWithRole,
  };
}

/** Plans what the API wrote, then lets the worker make every call due. */
async function settle(w: World): Promise<void> {
  while ((await h.container.stores.accessPlan.planBatch(1_000)).events > 0);
  await w.worker.drain();
}

/** Creates the member's membership on the world's plan; returns its id. */
async function join(w: World, userId: string, end = future().iso): Promise<string> {
  const res = await w.t.request({ method: 'POST', url: `${w.t.base}/memberships`, payload: { user_id: userId, end_date: end, plan_id: w.planId } });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { data: { membership_id: string } }).data.membership_id;
}

async function leave(w: World, membershipId: string): Promise<void> {
  const res = await w.t.request({ method: 'DELETE', url: `${w.t.base}/memberships/${membershipId}` });
  expect(res.statusCode, res.body).toBe(204);
}

/** One comparison of the bot's project, then the worker's calls; returns the fake's calls they made. */
async function reconcile(w: World): Promise<FakeCall[]> {
  const from = h.discord.calls.length;
  // The worker takes the bot (a comparison is due), as its loop would.
  await w.worker.drain();
  const reports = await w.reconciler.runOnce();
  expect(reports.map((r) => r.projectId)).toContain(w.t.projectId);
  await w.worker.drain();
  return h.discord.calls.slice(from).filter((c) => c.botId === w.bot.id);
}

const roleCalls = (calls: FakeCall[]) => calls.filter((c) => c.route === ROLE_CALL);
const listings = (calls: FakeCall[]) => calls.filter((c) => c.route === '/guilds/{guild.id}/members' && c.method === 'GET');
const stateOf = async (w: World, targetId: string, userId: string) =>
  (await accessRows(h, w.t.projectId)).find((r) => r.target_id === targetId && r.user_id === userId);

describe('drift repair', () => {
  it('gives back a role removed by hand from an active member, with one call, reading the list in pages', async () => {
    const w = await world();
    const [paying, other] = [fakeSnowflake(), fakeSnowflake()];
    for (const u of [paying, other]) h.discord.addMember(w.guildId, u);
    await join(w, paying);
    await join(w, other);
    await settle(w);
    expect(h.discord.memberRoles(w.guildId, paying)).toContain(w.roleId);

    // A moderator takes the role away.
    h.discord.setMemberRoles(w.guildId, paying, []);
    const calls = await reconcile(w);

    expect(h.discord.memberRoles(w.guildId, paying)).toContain(w.roleId);
    expect(roleCalls(calls).map((c) => [c.method, c.path, c.status])).toStrictEqual([
      ['PUT', `/api/v10/guilds/${w.guildId}/members/${paying}/roles/${w.roleId}`, 204],
    ]);
    // 1,100 bystanders + 2 members + the owner and the bot: two pages, the second after the first's last id.
    expect(listings(calls).map((c) => new URL(c.path, 'http://x').searchParams.get('limit'))).toStrictEqual(['1000', '1000']);
    expect(new URL(listings(calls)[1]!.path, 'http://x').searchParams.get('after')).toMatch(/^\d{17,20}$/);
    expect(await stateOf(w, w.roleTargetId, paying)).toMatchObject({ state: 'synced', desired: 'granted' });
  });

  it('gives the role to a member who left and came back', async () => {
    const w = await world();
    const member = fakeSnowflake();
    await join(w, member);
    await settle(w);
    // Not in the guild yet: the worker's call met 10007 and the row waits.
    expect(await stateOf(w, w.roleTargetId, member)).toMatchObject({ state: 'waiting_for_member' });

    h.discord.addMember(w.guildId, member);
    const calls = await reconcile(w);

    expect(h.discord.memberRoles(w.guildId, member)).toStrictEqual([w.roleId]);
    expect(roleCalls(calls).map((c) => [c.method, c.status])).toStrictEqual([['PUT', 204]]);
    expect(await stateOf(w, w.roleTargetId, member)).toMatchObject({ state: 'synced' });

    // Leaves again: the row waits for them (no call), and coming back with the role kept is synced with no call.
    h.discord.removeMember(w.guildId, member);
    expect(roleCalls(await reconcile(w))).toStrictEqual([]);
    expect(await stateOf(w, w.roleTargetId, member)).toMatchObject({ state: 'waiting_for_member' });
    h.discord.addMember(w.guildId, member, [w.roleId]);
    expect(roleCalls(await reconcile(w))).toStrictEqual([]);
    expect(await stateOf(w, w.roleTargetId, member)).toMatchObject({ state: 'synced' });
  });

  it('takes the role again from a member whose access ended and who got it back by hand', async () => {
    const w = await world();
    const member = fakeSnowflake();
    h.discord.addMember(w.guildId, member);
    const membership = await join(w, member);
    await settle(w);
    await leave(w, membership);
    await settle(w);
    expect(h.discord.memberRoles(w.guildId, member)).toStrictEqual([]);

    h.discord.setMemberRoles(w.guildId, member, [w.roleId]);
    const calls = await reconcile(w);

    expect(h.discord.memberRoles(w.guildId, member)).toStrictEqual([]);
    expect(roleCalls(calls).map((c) => [c.method, c.path, c.status])).toStrictEqual([
      ['DELETE', `/api/v10/guilds/${w.guildId}/members/${member}/roles/${w.roleId}`, 204],
    ]);
    expect(await stateOf(w, w.roleTargetId, member)).toMatchObject({ state: 'synced', desired: 'revoked' });
  });

  it('kicks again a member whose access ended who is back in a guild whose on_expiry is kick', async () => {
    const w = await world({ guildOnExpiry: 'kick', grantGuild: true });
    const member = fakeSnowflake();
    h.discord.addMember(w.guildId, member);
    const membership = await join(w, member);
    await settle(w);
    await leave(w, membership);
    await settle(w);
    expect(h.discord.memberRoles(w.guildId, member)).toBeNull();

    h.discord.addMember(w.guildId, member);
    const calls = await reconcile(w);

    expect(h.discord.memberRoles(w.guildId, member)).toBeNull();
    // The kick only: the role row (revoked, and not held) needs nothing.
    expect(calls.filter((c) => c.method !== 'GET').map((c) => [c.method, c.path, c.status])).toStrictEqual([
      ['DELETE', `/api/v10/guilds/${w.guildId}/members/${member}`, 204],
    ]);
  });

  it('makes no call when nothing differs, and never touches members tenure does not manage', async () => {
    const w = await world();
    const paying = fakeSnowflake();
    const stranger = fakeSnowflake();
    h.discord.addMember(w.guildId, paying);
    // Someone tenure has no row for, holding the managed role by hand, and another role of theirs.
    h.discord.addMember(w.guildId, stranger, [w.roleId]);
    await join(w, paying);
    await settle(w);
    await reconcile(w);

    const calls = await reconcile(w);
    expect(calls.map((c) => [c.method, c.route])).toStrictEqual([
      ['GET', '/guilds/{guild.id}/members'],
      ['GET', '/guilds/{guild.id}/members'],
    ]);
    const everyCall = h.discord.calls.filter((c) => c.botId === w.bot.id);
    for (const u of [stranger, w.bystanderWithRole]) {
      expect(everyCall.filter((c) => c.path.includes(`/members/${u}`))).toStrictEqual([]);
      expect(h.discord.memberRoles(w.guildId, u)).toStrictEqual([w.roleId]);
    }
  });

  it('flags the guild target when the member list is refused (no Server Members intent), and clears it once it is read', async () => {
    const w = await world();
    h.discord.setGuildMembersIntent(w.bot.id, false);
    await reconcile(w);
    const flagged = await targetHealth(h, w.guildTargetId);
    expect(flagged).toMatchObject({ health: 'unhealthy', health_error: { code: '50001' } });
    const shown = await w.t.request({ method: 'GET', url: `${w.t.base}/targets/${w.guildTargetId}` });
    expect(shown.json().data[0], shown.body).toMatchObject({ health: 'unhealthy', health_error: { code: '50001', message: 'Missing Access' } });
    // The role target is not at fault: grants go on.
    expect(await targetHealth(h, w.roleTargetId)).toMatchObject({ health: 'ok' });

    h.discord.setGuildMembersIntent(w.bot.id, true);
    await reconcile(w);
    expect(await targetHealth(h, w.guildTargetId)).toStrictEqual({ health: 'ok', health_error: null });
  });
});
