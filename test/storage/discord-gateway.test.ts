import { afterEach, describe, expect, it } from 'vitest';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/worker-runtime.js';
import { accessRows, integrationRow, targetHealth } from '../support/access-seed.js';
import { addBot, connectBot, discordPath, type TestBot } from '../support/bots.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { fakeSnowflake, type FakeCall } from '../support/fake-discord.js';
import { future, useHarness, userId, type Tenant } from '../support/harness.js';
import { capturedLogs } from '../support/logs.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Each Discord bot's gateway connection (docs/access-discord.md, "The gateway") in the worker
 * runtime, on both storages, against the fake Discord's gateway (test/support/fake-discord-gateway.ts):
 * a member who paid before joining gets their role when they join, and a role removed by hand comes
 * back, without drift repair (its interval is a day, and no member list is read after the first
 * comparison); members tenure does not manage cost no call; a refused token (4004) flags the bot
 * once and nothing dials again; a bot connected again with a new token identifies with it, once;
 * the Server Members Intent switched off (4014) is said once while drift repair goes on flagging
 * the guild; a disconnected bot's gateway closes.
 */

const { lines, logger } = capturedLogs('warn');
const h = useHarness({ env: { TENURE_ACCESS_RECONCILE_SECONDS: '86400', TENURE_ACCESS_LEASE_SECONDS: '3' }, logger });

const ROLE_CALL = '/guilds/{guild.id}/members/{user.id}/roles/{role.id}';
const LISTING = '/guilds/{guild.id}/members';

let runtime: WorkerRuntime | null = null;
afterEach(async () => {
  await runtime?.stop();
  runtime = null;
});

interface World {
  t: Tenant;
  bot: TestBot;
  guildId: string;
  roleId: string;
  guildTargetId: string;
  planId: string;
}

/** A project granting one role of a guild, its bot connected (the bot's intent as given), and the worker runtime started. */
async function world(o: { membersIntent?: boolean } = {}): Promise<World> {
  const t = await h.tenant();
  const bot = addBot(h.discord);
  if (o.membersIntent === false) h.discord.setGuildMembersIntent(bot.id, false);
  const guildId = fakeSnowflake();
  const roleId = fakeSnowflake();
  h.discord.addGuild({ id: guildId });
  h.discord.addRole(guildId, { id: roleId, position: 1 });
  const guildTarget = await createTarget(t, { kind: 'guild', external_id: guildId, target_name: 'Guild' });
  const roleTarget = await createTarget(t, { kind: 'role', external_id: roleId, parent_target_id: guildTarget.target_id });
  const plan = await createPlan(t);
  await grant(t, plan.plan_id, roleTarget.target_id);
  await connectBot(t, bot);
  runtime = await startWorkerRuntime(h.container, { sweepIntervalMs: 60_000 });
  return { t, bot, guildId, roleId, guildTargetId: guildTarget.target_id, planId: plan.plan_id };
}

async function pay(w: World, user: string): Promise<void> {
  const res = await w.t.request({ method: 'POST', url: `${w.t.base}/memberships`, payload: { user_id: user, end_date: future().iso, plan_id: w.planId } });
  expect(res.statusCode, res.body).toBe(201);
}

const callsOf = (w: World, from: number): FakeCall[] => h.discord.calls.slice(from).filter((c) => c.botId === w.bot.id);
const holds = (w: World, user: string) => h.discord.memberRoles(w.guildId, user)?.includes(w.roleId) ?? false;
const connected = (w: World) => h.discord.gateway.openConnections(w.bot.id) === 1;
const gatewayLog = (token: string) => h.discord.gateway.log.filter((e) => e.token === token);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the Discord gateway', () => {
  it('gives the role of a member who paid before joining when they join, and again when it is removed by hand; strangers cost nothing', async () => {
    const w = await world();
    await eventually(() => connected(w), 'the bot’s gateway is connected');
    // The first comparison (a new connection is compared at once) has read the list once.
    await eventually(() => callsOf(w, 0).some((c) => c.route === LISTING), 'the first drift repair');

    const member = userId();
    await pay(w, member);
    await eventually(async () => (await accessRows(h, w.t.projectId)).some((r) => r.user_id === member && r.state === 'waiting_for_member'), 'the grant waits for the member');

    const before = h.discord.calls.length;
    h.discord.addMember(w.guildId, member);
    await eventually(() => holds(w, member), 'the member holds the role after joining');
    const grants = callsOf(w, before).filter((c) => c.route === ROLE_CALL && c.method === 'PUT');
    expect(grants.map((c) => [c.status, c.path.includes(member)])).toEqual([[204, true]]);
    await eventually(async () => (await accessRows(h, w.t.projectId)).some((r) => r.user_id === member && r.state === 'synced'), 'the row is synced');

    // A moderator takes the role away: it comes back.
    h.discord.setMemberRoles(w.guildId, member, []);
    await eventually(() => holds(w, member), 'the role is given again');

    // Someone tenure does not manage joins and gets a role by hand: no call about them.
    const stranger = userId();
    const mark = h.discord.calls.length;
    h.discord.addMember(w.guildId, stranger);
    h.discord.setMemberRoles(w.guildId, stranger, [w.roleId]);
    // A member of ours joining after the stranger proves the stranger's events were handled first.
    const late = userId();
    await pay(w, late);
    await eventually(async () => (await accessRows(h, w.t.projectId)).some((r) => r.user_id === late && r.state === 'waiting_for_member'), 'the late member waits');
    h.discord.addMember(w.guildId, late);
    await eventually(() => holds(w, late), 'the late member holds the role');
    const after = callsOf(w, mark);
    expect(after.filter((c) => c.path.includes(stranger))).toEqual([]);
    // Drift repair never ran again: every repair came from the gateway.
    expect(callsOf(w, before).filter((c) => c.route === LISTING)).toEqual([]);
    expect(h.discord.memberRoles(w.guildId, stranger)).toEqual([w.roleId]);
  });

  it('a token refused at the gateway (4004) flags the bot once; nothing dials again', async () => {
    const w = await world();
    await eventually(() => connected(w), 'the bot’s gateway is connected');
    // The token is reset in the Developer Portal, and the connection drops: the library resumes with the old token.
    h.discord.resetToken(w.bot.id, `${w.bot.token}.reset`);
    h.discord.gateway.disconnect(w.bot.id, 4000);
    await eventually(async () => (await integrationRow(h, w.t.projectId, 'discord'))?.health === 'unhealthy', 'the bot is flagged unhealthy');
    const row = await integrationRow(h, w.t.projectId, 'discord');
    expect(row?.last_error?.code).toBe('unauthorized');
    const tries = gatewayLog(w.bot.token);
    expect(tries.map((e) => [e.op, e.closedWith])).toEqual([
      ['identify', null],
      ['resume', 4004],
    ]);
    // Three times the library's reconnect delay: no identify or resume again.
    await sleep(1_500);
    expect(gatewayLog(w.bot.token)).toHaveLength(tries.length);
    expect(h.discord.gateway.openConnections(w.bot.id)).toBe(0);
  });

  it('a bot connected again with a new token opens its gateway again with it, and once', async () => {
    const w = await world();
    await eventually(() => connected(w), 'the bot’s gateway is connected');
    const token = `${w.bot.token}.new`;
    h.discord.resetToken(w.bot.id, token);
    await connectBot(w.t, { ...w.bot, token });
    await eventually(() => gatewayLog(token).some((e) => e.op === 'identify' && e.closedWith === null) && connected(w), 'identified with the new token');
    await sleep(500);
    expect(h.discord.gateway.openConnections(w.bot.id)).toBe(1);
    expect(gatewayLog(token).filter((e) => e.closedWith !== null)).toEqual([]);
  });

  it('the Server Members Intent switched off (4014) is said once, and drift repair still flags the guild', async () => {
    lines.length = 0;
    const w = await world({ membersIntent: false });
    await eventually(() => gatewayLog(w.bot.token).some((e) => e.closedWith === 4014), 'the identify is refused with 4014');
    // Drift repair goes on: its first comparison finds the member list refused and flags the guild.
    await eventually(async () => (await targetHealth(h, w.guildTargetId)).health === 'unhealthy', 'the guild target is flagged');
    expect((await targetHealth(h, w.guildTargetId)).health_error?.code).toBe('50001');
    const status = await w.t.request({ method: 'GET', url: discordPath(w.t) });
    expect(status.json().data.targets.map((u: { target_id: string }) => u.target_id), status.body).toEqual([w.guildTargetId]);
    await sleep(1_500);
    expect(gatewayLog(w.bot.token)).toHaveLength(1);
    const warnings = lines.filter((l) => /4014 Disallowed intent/.test(String(l.msg)) && l.projectId === w.t.projectId);
    expect(warnings).toHaveLength(1);
    // Grants go on without the intent.
    const member = userId();
    h.discord.addMember(w.guildId, member);
    await pay(w, member);
    await eventually(() => holds(w, member), 'the member holds the role');
    expect((await integrationRow(h, w.t.projectId, 'discord'))?.health).toBe('ok');
  });

  it('closes the gateway of a bot that is disconnected', async () => {
    const w = await world();
    await eventually(() => connected(w), 'the bot’s gateway is connected');
    expect(runtime!.discordGateway?.projects).toContain(w.t.projectId);
    const res = await w.t.request({ method: 'DELETE', url: discordPath(w.t) });
    expect(res.statusCode, res.body).toBe(200);
    await eventually(() => h.discord.gateway.openConnections(w.bot.id) === 0, 'the gateway is closed');
    expect(runtime!.discordGateway?.projects).not.toContain(w.t.projectId);
    // Its sessions are not resumed by anyone.
    await sleep(700);
    expect(h.discord.gateway.openConnections(w.bot.id)).toBe(0);
  });
});
