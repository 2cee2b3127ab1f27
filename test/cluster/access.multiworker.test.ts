import { describe, expect, it } from 'vitest';
import { startFakeDiscord } from '../support/fake-discord.js';
import { allGranted, useAccessProcesses } from '../support/access-processes.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Two access worker processes (`npx tenure worker`) sharing PostgreSQL run against one bot at
 * Discord's real ceiling: one holds the bot's lease the whole time, so its calls keep to one
 * budget and the fake refuses no more than a handful.
 */

describe('two access workers, one bot', () => {
  const { fakes, startWorker, stop, logs, world, grantsOf, leaseOwner } = useAccessProcesses();

  it('two worker processes against one bot share its one budget at Discord’s ceiling', { timeout: 60_000 }, async () => {
    // Discord's published ceiling: 50 requests/s per bot; the member-role bucket as wide (the fake's
    // default, 10 per 10 s, would make the bucket, not the global limit, the bound).
    const fake = await startFakeDiscord({ globalPerSecond: 50, buckets: { memberRoles: { limit: 50, windowMs: 1_000 } } });
    fakes.push(fake);
    const workerEnv = { TENURE_DISCORD_API_URL: fake.url };
    const workers = [startWorker(workerEnv), startWorker(workerEnv)];
    const n = 300;
    const w = await world(fake, n, 1);
    const owners = new Set<string>();
    const watch = setInterval(() => {
      void leaseOwner(w.projectId).then((owner) => owner && owners.add(owner), () => undefined);
    }, 100);
    try {
      await eventually(() => allGranted(fake, w), `every member holds the role\n${logs()}`, 40_000);
    } finally {
      clearInterval(watch);
    }
    for (const child of workers) await stop(child, 'SIGTERM');

    const calls = fake.calls.filter((c) => c.botId === w.bot.id);
    const stats = fake.stats(w.bot.id);
    // Two processes each keeping to 50/s on their own would send ~100/s: dozens of global 429s a second.
    expect(stats.rateLimited, JSON.stringify(stats)).toBeLessThanOrEqual(5);
    expect(grantsOf(calls, w)).toHaveLength(n);
    // One lease owner the whole time.
    expect(owners.size).toBe(1);
  });
});
