import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { useAccessProcesses } from '../support/access-processes.js';
import { fakeSnowflake, startFakeDiscord, type FakeDiscord } from '../support/fake-discord.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Reminders with real worker processes (`npx tenure worker`, the built CLI) sharing PostgreSQL, on
 * the wall clock (docs/lifecycle.md): two workers both running the reminders job write each
 * reminder once and send its DM once; a worker killed after the reminders' transaction and before
 * Discord answered its DM (the fake holding its answers) loses nothing: the worker started after
 * it sends the message once the claim's lease has run out, and there is one event and one message.
 */

const DAY = 86_400_000;

describe('reminders across worker processes', () => {
  const { fakes, startWorker, stop, logs, withContainer, withDatabase } = useAccessProcesses();

  /** A project with offsets ["1d"], its Discord bot connected, and `n` members (no plan) whose 1d instant is `lead` ms away. */
  async function project(fake: FakeDiscord, n: number, leadMs: number) {
    const bot = { id: fakeSnowflake(), token: `rem.${fakeSnowflake()}`, username: 'tenure-reminders' };
    fake.addBot(bot);
    const members = Array.from({ length: n }, () => fakeSnowflake());
    const projectId = await withContainer({ TENURE_DISCORD_API_URL: fake.url }, async (c) => {
      const created = await c.services.projects.createProject('reminders');
      if (!created.ok) throw created.error;
      const id = created.value.id;
      await c.database.db.execute(sql`INSERT INTO settings (project_id, key, value) VALUES (${id}, 'reminder_offsets', '["1d"]'::jsonb)`);
      const connected = await c.services.integrations.connect(id, 'discord', bot.token);
      if (!connected.ok) throw connected.error;
      await c.database.db.execute(sql`
        INSERT INTO memberships (project_id, user_id, end_date)
        SELECT ${id}, u, ${new Date(Date.now() + DAY + leadMs).toISOString()}::timestamptz FROM unnest(${sql.param(members)}::text[]) AS u`);
      return id;
    });
    return { bot, members, projectId };
  }
  const counts = (projectId: string) =>
    withDatabase(async (d) =>
      rowsOf<{ events: number; reminders: number; states: string[] }>(
        await d.db.execute(sql`
          SELECT (SELECT count(*)::int FROM events WHERE project_id = ${projectId} AND type = 'membership.expiring') AS events,
                 (SELECT count(*)::int FROM reminders WHERE project_id = ${projectId}) AS reminders,
                 (SELECT COALESCE(array_agg(state ORDER BY state), '{}') FROM notifications WHERE project_id = ${projectId} AND kind = 'reminder') AS states`),
      )[0]!,
    );
  // A message's claim lasts 10 s here (a minute by default), so a dead worker's message is sent on soon.
  const workerEnv = (fake: FakeDiscord) => ({ TENURE_DISCORD_API_URL: fake.url, TENURE_DISCORD_GATEWAY: 'false', TENURE_MESSAGE_LEASE_SECONDS: '10' });

  it('two workers running the reminders job: each reminder written once, each DM sent once', { timeout: 90_000 }, async () => {
    const fake = await startFakeDiscord({ buckets: { createMessage: null } });
    fakes.push(fake);
    const p = await project(fake, 30, 15_000);
    const workers = [startWorker(workerEnv(fake)), startWorker(workerEnv(fake))];
    const dmCount = () => p.members.reduce((sum, m) => sum + fake.dms(p.bot.id, m).length, 0);
    await eventually(() => dmCount() >= 30, `30 reminder DMs\n${logs()}`, 60_000);
    // Both workers make another pass (every 5 s): nothing more is written or sent.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    for (const w of workers) await stop(w, 'SIGTERM');
    expect(p.members.map((m) => fake.dms(p.bot.id, m).length)).toStrictEqual(p.members.map(() => 1));
    expect(await counts(p.projectId)).toStrictEqual({ events: 30, reminders: 30, states: Array.from({ length: 30 }, () => 'sent') });
  });

  it('a worker killed between the reminder’s event and its DM: the next worker sends it once', { timeout: 90_000 }, async () => {
    const fake = await startFakeDiscord({ buckets: { createMessage: null } });
    fakes.push(fake);
    const p = await project(fake, 1, 12_000);
    const member = p.members[0]!;
    // Discord takes the worker's Create DM and never answers it in time.
    fake.setLatency(120_000);
    const first = startWorker(workerEnv(fake));
    await eventually(async () => (await counts(p.projectId)).events === 1, `the reminder's event\n${logs()}`, 60_000);
    // The message is claimed (leased to the first worker for 10 s) and its Create DM is out, unanswered.
    const createDm = () => fake.calls.filter((c) => c.botId === p.bot.id && c.route === '/users/@me/channels').length;
    await eventually(() => createDm() === 1, `the Create DM at the fake\n${logs()}`, 20_000);
    await stop(first, 'SIGKILL');
    expect(fake.dms(p.bot.id, member)).toStrictEqual([]);
    fake.setLatency(0);
    const second = startWorker(workerEnv(fake));
    // The claim's lease runs out, then the new worker sends it.
    await eventually(() => fake.dms(p.bot.id, member).length >= 1, `the DM after the restart\n${logs()}`, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await stop(second, 'SIGTERM');
    expect(fake.dms(p.bot.id, member)).toHaveLength(1);
    expect(await counts(p.projectId)).toStrictEqual({ events: 1, reminders: 1, states: ['sent'] });
  });
});
