import { describe, expect, it } from 'vitest';
import { startFakeDiscord } from '../support/fake-discord.js';
import { allGranted, useAccessProcesses } from '../support/access-processes.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Two worker processes (`npx tenure worker`) sharing PostgreSQL, one bot: its gateway connection
 * is held by exactly one of them (the one holding the bot's lease), counted at the fake Discord's
 * gateway; when that process is killed, the other takes the lease over once it runs out and opens
 * the one connection, and a role removed by hand then comes back through it.
 */

describe('two worker processes, one bot’s gateway', () => {
  const { fakes, startWorker, stop, logs, world, leaseOwner } = useAccessProcesses();

  it('holds each bot’s gateway once across the cluster, and the other process takes it over', { timeout: 60_000 }, async () => {
    const fake = await startFakeDiscord({ buckets: { memberRoles: { limit: 50, windowMs: 1_000 } } });
    fakes.push(fake);
    // Drift repair a day apart: after its first comparison, what comes back is the gateway's doing.
    const workerEnv = { TENURE_DISCORD_API_URL: fake.url, TENURE_ACCESS_RECONCILE_SECONDS: '86400' };
    const workers = [startWorker(workerEnv), startWorker(workerEnv)];
    const w = await world(fake, 20, 1);
    const open = () => fake.gateway.openConnections(w.bot.id);
    await eventually(() => allGranted(fake, w) && open() === 1, `every member granted and one gateway open\n${logs()}`, 30_000);

    // For a while, never a second connection: the process without the lease opens none.
    const seen = new Set<number>();
    for (let i = 0; i < 20; i++) {
      seen.add(open());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect([...seen]).toEqual([1]);
    const identified = fake.gateway.log.filter((e) => e.botId === w.bot.id && e.op === 'identify' && e.closedWith === null);
    expect(identified).toHaveLength(1);

    // The holder dies without a word; the other takes the lease over once it runs out (3 s here).
    const owner = await leaseOwner(w.projectId);
    const holder = workers.find((child) => owner?.split(':')[1] === String(child.pid));
    expect(holder, `the lease owner ${owner} is one of the workers`).toBeDefined();
    await stop(holder!, 'SIGKILL');
    const survivor = workers.find((child) => child !== holder)!;
    await eventually(async () => (await leaseOwner(w.projectId))?.split(':')[1] === String(survivor.pid) && open() === 1, `the other worker holds the bot and its gateway\n${logs()}`, 20_000);

    // Through the new holder's gateway: a role removed by hand comes back.
    const guild = w.guilds[0]!;
    const member = guild.members[0]!;
    fake.setMemberRoles(guild.guildId, member, []);
    await eventually(() => fake.memberRoles(guild.guildId, member)?.includes(guild.roleId) ?? false, `the role is given again\n${logs()}`, 15_000);
    expect(open()).toBe(1);
    await stop(survivor, 'SIGTERM');
    await eventually(() => open() === 0, 'the stopped worker closed its gateway', 10_000);
  });
});
