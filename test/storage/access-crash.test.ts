import { describe, expect, it } from 'vitest';
import { startFakeDiscord } from '../support/fake-discord.js';
import { allGranted, BURST, CONCURRENCY, GUILDS, useAccessProcesses } from '../support/access-processes.js';
import { onPostgres } from '../support/harness.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * The access worker across crashes, with real processes (`npx tenure worker`, the built CLI) and
 * the real @discordjs/rest against the local fake Discord. A burst of 800 pending role grants
 * over 8 guilds; the worker holding the bot is killed with SIGKILL mid-burst; on PostgreSQL a
 * second worker, running all along, takes the bot over once the dead one's lease runs out; on
 * embedded storage a new worker opens the same data directory. Every row ends synced, every member
 * holds the role on the fake, and no member gets a second call except those whose call was out, or
 * answered but not yet recorded, when the process died (the bound is asserted exactly, from the
 * rows recorded at the kill). Two workers sharing one bot's budget: test/cluster/access.multiworker.test.ts.
 */

describe(`access worker across a crash (${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  const { fakes, startWorker, stop, logs, world, rowsByState, grantsOf, userOf } = useAccessProcesses();

  // Worker processes on embedded storage start slowly on a loaded host (WebAssembly, the data
  // directory's lock): the bound is the Telegram crash test's, not a measure of speed.
  it('kill -9 mid-burst: every grant lands, and only the calls out at the kill are made twice', { timeout: 180_000 }, async () => {
    // Fast limits: this case is about what a crash leaves, not about Discord's ceiling (the next one is).
    const fake = await startFakeDiscord({ globalPerSecond: 2_000, latencyMs: 2, buckets: { memberRoles: { limit: 2_000, windowMs: 1_000 } } });
    fakes.push(fake);
    const w = await world(fake, BURST, GUILDS);
    expect((await rowsByState(w.projectId)).states).toStrictEqual({ pending: BURST });
    const workerEnv = { TENURE_DISCORD_API_URL: fake.url, TENURE_DISCORD_GLOBAL_PER_SECOND: '2000' };

    const first = startWorker(workerEnv);
    // PostgreSQL: a second worker is running all along, waiting for the bot's lease.
    const standby = onPostgres ? startWorker(workerEnv) : null;
    await eventually(() => grantsOf(fake.calls, w).length >= BURST / 4, `a quarter of the burst is granted\n${logs()}`, 30_000);
    await stop(first, 'SIGKILL');
    const killedAt = fake.calls.length;
    const grantedBeforeKill = new Set(grantsOf(fake.calls.slice(0, killedAt), w).map(userOf));
    expect(grantedBeforeKill.size).toBeLessThan(BURST);

    // PGlite: the rows are read once the dead process's DATA_DIR lock is stale (2 s here), as the
    // restarted worker takes it over. PostgreSQL: a statement the dead process had sent may still
    // commit: let the database finish it.
    await new Promise((resolve) => setTimeout(resolve, onPostgres ? 300 : 2_500));
    // What the dead worker had recorded: everything else it called may be called again.
    const recordedAtKill = (await rowsByState(w.projectId)).synced;
    const unrecorded = [...grantedBeforeKill].filter((u) => !recordedAtKill.has(u));

    const second = standby ?? startWorker(workerEnv);
    await eventually(
      () => allGranted(fake, w),
      `every member holds the role after the restart\n${logs()}`,
      60_000,
    );
    await stop(second, 'SIGTERM');
    expect(second.exitCode, logs()).toBe(0);

    const { states } = await rowsByState(w.projectId);
    expect(states).toStrictEqual({ synced: BURST });
    const perMember = new Map<string, number>();
    for (const c of grantsOf(fake.calls, w)) perMember.set(userOf(c), (perMember.get(userOf(c)) ?? 0) + 1);
    expect(perMember.size).toBe(BURST);
    const twice = [...perMember].filter(([, n]) => n > 1).map(([u]) => u);
    // Only rows whose call was out (or answered, not yet written) when the process died, once more each.
    expect(twice.every((u) => unrecorded.includes(u)), `called twice: ${twice.join(',')}; unrecorded at the kill: ${unrecorded.join(',')}`).toBe(true);
    expect(Math.max(...perMember.values())).toBeLessThanOrEqual(2);
    // The bound the worker keeps (calls out + answers not written < 2 × TENURE_ACCESS_CONCURRENCY,
    // however slow the writes): never a replay of the burst.
    expect(unrecorded.length).toBeLessThanOrEqual(2 * CONCURRENCY);
    const stats = fake.stats(w.bot.id);
    expect(stats.byStatus[429] ?? 0).toBe(0);
  });
});
