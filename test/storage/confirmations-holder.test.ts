import { setTimeout as sleep } from 'node:timers/promises';
import type { REST } from '@discordjs/rest';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import { rowsOf } from '../../src/database/db.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { createAccessWorker, createConfirmationJob } from '../../src/platform-jobs.js';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/worker-runtime.js';
import { createMembership } from '../support/api.js';
import { discordBotShop, turnOffMessages, type BotShop } from '../support/front-desk.js';
import { onPostgres, useHarness, type Harness } from '../support/harness.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Confirmations go through the holder of the project's bot (docs/front-desk.md, "Confirmations";
 * docs/access-discord.md, "One bot, one budget"), on both storages, against the fake Discord: of
 * two workers (two lease owners) only the one holding the bot sends, once, and after a handover the
 * new holder does; a 429 on Create Message is waited out by the bot's REST client and costs no
 * attempt; with the gateway off (bots held only with work) a due message is work, so the bot is
 * taken for it and the message sent.
 */

const MESSAGE_ROUTE = '/channels/{channel.id}/messages';
/** Create Message, one per 2 s per bot: a second message in the window gets a 429 unless the client knows the bucket. */
const MESSAGE_BUCKET = { limit: 1, windowMs: 2_000 };

/** Members made through the API here stand for paid ones: their welcome is off, so the one message is the confirmation. */
async function shop(h: Harness): Promise<BotShop> {
  const s = await discordBotShop(h);
  await turnOffMessages(s.t, 'welcome');
  return s;
}

/** A member of the plan whose payment queued its confirmation (as the payment's transaction does). */
async function paid(h: Harness, s: BotShop): Promise<string> {
  const m = await createMembership(s.t, { planId: s.planId });
  expect(await h.container.stores.notifications.queueConfirmation({ projectId: s.t.projectId, userId: m.user_id, planId: s.planId, paymentKey: `pi_${m.user_id}` }, new Date())).toBe(true);
  return m.user_id;
}

const rows = async (h: Harness, projectId: string) =>
  rowsOf<{ user_id: string; state: string; attempts: number }>(
    await h.container.database.db.execute(sql`SELECT user_id, state, attempts FROM notifications WHERE project_id = ${projectId} ORDER BY created_at`),
  );

describe(`confirmations through the bot's holder (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness({ discord: { buckets: { createMessage: MESSAGE_BUCKET } } });
  const workers: AccessWorker<REST>[] = [];
  const jobs: ConfirmationJob[] = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    for (const w of workers.splice(0)) await w.stop(0);
  });
  /** A Discord access worker as a worker process builds it (the gateway on: it holds every bot it can), not started: the test takes the bots. */
  const worker = () => {
    const w = createAccessWorker(h.container)!;
    workers.push(w);
    return w;
  };
  const job = (w: AccessWorker<REST>) => {
    const j = createConfirmationJob(h.container, { discord: w, telegram: null }, { pollMs: 60_000 })!;
    jobs.push(j);
    return j;
  };
  const pass = async (j: ConfirmationJob) => {
    j.wake();
    await j.idle();
  };

  it('two workers: only the holder sends the confirmation, once; after a handover the new holder sends the next', async () => {
    const s = await shop(h);
    const [a, b] = [worker(), worker()];
    expect((await a.leases.acquire()).map((bot) => bot.projectId)).toContain(s.t.projectId);
    expect((await b.leases.acquire()).map((bot) => bot.projectId)).not.toContain(s.t.projectId);
    const [byA, byB] = [job(a), job(b)];
    const first = await paid(h, s);

    await pass(byB);
    expect(h.discord.dms(s.bot.id, first)).toStrictEqual([]);
    expect(await rows(h, s.t.projectId)).toStrictEqual([{ user_id: first, state: 'pending', attempts: 0 }]);
    await Promise.all([pass(byA), pass(byB)]);
    expect(h.discord.dms(s.bot.id, first)).toHaveLength(1);
    expect(await rows(h, s.t.projectId)).toStrictEqual([{ user_id: first, state: 'sent', attempts: 1 }]);

    // A stops and gives its bots back; B takes them, and sends the next one.
    await a.stop(0);
    expect((await b.leases.acquire()).map((bot) => bot.projectId)).toContain(s.t.projectId);
    const second = await paid(h, s);
    await Promise.all([pass(byA), pass(byB)]);
    expect(h.discord.dms(s.bot.id, second)).toHaveLength(1);
    expect(h.discord.dms(s.bot.id, first)).toHaveLength(1);
    expect((await rows(h, s.t.projectId)).map((r) => r.state)).toStrictEqual(['sent', 'sent']);
  });

  it("a 429 on Create Message is waited out by the bot's REST client: the message goes in the same attempt", async () => {
    const s = await shop(h);
    const w = worker();
    await w.leases.acquire();
    // Someone else used the bot's message window (the client has not seen this bucket yet).
    const headers = { Authorization: `Bot ${s.bot.token}`, 'Content-Type': 'application/json' };
    const dm = await fetch(`${h.discord.url}/v10/users/@me/channels`, { method: 'POST', headers, body: JSON.stringify({ recipient_id: '1234567890123456' }) });
    const { id } = (await dm.json()) as { id: string };
    const byHand = await fetch(`${h.discord.url}/v10/channels/${id}/messages`, { method: 'POST', headers, body: JSON.stringify({ content: 'by hand' }) });
    expect(byHand.status).toBe(200);

    const member = await paid(h, s);
    await pass(job(w));
    const messages = h.discord.calls.filter((c) => c.botId === s.bot.id && c.route === MESSAGE_ROUTE).map((c) => c.status);
    expect(messages).toStrictEqual([200, 429, 200]);
    expect(h.discord.dms(s.bot.id, member)).toHaveLength(1);
    expect(await rows(h, s.t.projectId)).toStrictEqual([{ user_id: member, state: 'sent', attempts: 1 }]);
  });
});

describe(`confirmations with the Discord gateway off (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness({ env: { TENURE_DISCORD_GATEWAY: 'false', TENURE_ACCESS_RECONCILE_SECONDS: '86400' } });
  let runtime: WorkerRuntime | null = null;
  afterEach(async () => {
    await runtime?.stop();
    runtime = null;
  });
  const leaseOwner = async (projectId: string) =>
    rowsOf<{ lease_owner: string | null }>(await h.container.database.db.execute(sql`SELECT lease_owner FROM integrations WHERE project_id = ${projectId} AND platform = 'discord'`))[0]
      ?.lease_owner ?? null;

  it('a bot held only with work is taken for a due confirmation, which its holder then sends', async () => {
    const s = await shop(h);
    // Compared with Discord just now: drift repair is not work for a day.
    await h.container.database.db.execute(sql`UPDATE integrations SET reconciled_at = now() WHERE project_id = ${s.t.projectId}`);
    runtime = await startWorkerRuntime(h.container, { pollMs: 100, sweepIntervalMs: 60_000 });
    const access = runtime.access!;
    // A few polls of the worker: with nothing to do it takes nothing.
    await sleep(400);
    expect(await leaseOwner(s.t.projectId)).toBeNull();

    const member = await paid(h, s);
    // The DM reaches the fake before the job records it: wait for the record.
    await eventually(async () => (await rows(h, s.t.projectId))[0]?.state === 'sent', 'the confirmation is sent and recorded');
    expect(await rows(h, s.t.projectId)).toStrictEqual([{ user_id: member, state: 'sent', attempts: 1 }]);
    expect(await leaseOwner(s.t.projectId)).toBe(access.id);
    expect(h.discord.dms(s.bot.id, member)).toHaveLength(1);
  });
});
