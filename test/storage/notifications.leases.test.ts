import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { BotLeasesStore } from '../../src/store/bot-leases.store.js';
import { NotificationsStore } from '../../src/store/notifications.store.js';
import { createMembership } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { onPostgres, useHarness, type Tenant } from '../support/harness.js';
import { turnOffMessages } from '../support/front-desk.js';

/**
 * Confirmations go through the holder of the project's bot (src/store/notifications.store.ts,
 * bot-leases.store.ts) on both storages: a claim takes only the messages of bots leased to the
 * claimer (and of projects with no healthy bot, to end them without a call); a due message is work
 * for the lease acquire, so a bot held only "with work" is taken for it; a message given back is due
 * at once with its attempt not counted.
 */

const T0 = new Date('2030-01-01T00:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const WAIT = 60_000;
const HELD_UNTIL = '2100-01-01T00:00:00.000Z';
const RAN_OUT = '2029-01-01T00:00:00.000Z';

describe(`confirmations by bot lease (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();
  const store = () => new NotificationsStore(h.database.db);
  const leases = () => new BotLeasesStore(h.database.db);
  beforeEach(async () => {
    await h.database.db.execute(sql`DELETE FROM notifications`);
  });

  /** A project whose Discord bot is leased as given, with one member's confirmation queued. */
  async function shop(lease: { owner: string | null; until?: string; health?: 'ok' | 'unhealthy' }) {
    const t = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, lease_owner, lease_expires_at, health)
      VALUES (${t.projectId}, 'discord', 'v1.dummy.sealed', ${String(Date.now()) + String(Math.floor(Math.random() * 1000))}, 'bot',
              ${lease.owner}, ${lease.owner === null ? null : (lease.until ?? HELD_UNTIL)}::timestamptz, ${lease.health ?? 'ok'})`);
    // Members made through the API here stand for paid ones: no welcome, the messages are the store's own.
    await turnOffMessages(t, 'welcome');
    const plan = await createPlan(t);
    const m = await createMembership(t, { planId: plan.plan_id });
    expect(await store().queueConfirmation({ projectId: t.projectId, userId: m.user_id, planId: plan.plan_id, paymentKey: `pi_${m.user_id}` }, T0)).toBe(true);
    return t;
  }
  const projectsOf = (claimed: { projectId: string }[]) => claimed.map((c) => c.projectId).sort();
  const row = async (t: Tenant) =>
    rowsOf<{ attempts: number; next_attempt_at: string; last_error: string | null }>(
      await h.database.db.execute(sql`SELECT attempts, next_attempt_at::text, last_error FROM notifications WHERE project_id = ${t.projectId}`),
    )[0]!;

  it('each claimer takes only the messages of the bots it holds; messages with no healthy bot are taken by any, to be ended', async () => {
    const mine = await shop({ owner: 'w1' });
    const theirs = await shop({ owner: 'w2' });
    const ranOut = await shop({ owner: 'w1', until: RAN_OUT });
    const nobody = await shop({ owner: null });
    const refused = await shop({ owner: null, health: 'unhealthy' });
    const gone = await shop({ owner: null });
    await h.database.db.execute(sql`DELETE FROM integrations WHERE project_id = ${gone.projectId}`);

    const first = await store().claim(['w1'], T0, later(WAIT), 10, WAIT);
    expect(projectsOf(first)).toStrictEqual([mine.projectId, refused.projectId, gone.projectId].sort());
    expect(Object.fromEntries(first.map((c) => [c.projectId, c.bot]))).toStrictEqual({ [mine.projectId]: 'held', [refused.projectId]: 'unhealthy', [gone.projectId]: null });
    expect(projectsOf(await store().claim(['w2'], T0, later(WAIT), 10, WAIT))).toStrictEqual([theirs.projectId]);
    // A lease run out, or never taken: nobody's to send until a worker takes the bot.
    expect(await store().claim(['w1', 'w2'], T0, later(WAIT), 10, WAIT)).toStrictEqual([]);
    expect((await row(ranOut)).attempts).toBe(0);
    expect((await row(nobody)).attempts).toBe(0);
  });

  it('a due message is work: a worker holding bots only with work takes the bot for it, then claims it; a bot with none is left', async () => {
    const waiting = await shop({ owner: 'dead', until: RAN_OUT });
    const idle = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name) VALUES (${idle.projectId}, 'discord', 'v1.dummy.sealed', ${String(Date.now())}, 'bot')`);
    const taken = await leases().acquire({ owner: 'w3', platform: 'discord', now: T0, until: later(WAIT), limit: 100, reconcileEveryMs: null });
    expect(taken.map((b) => b.projectId)).toContain(waiting.projectId);
    expect(taken.map((b) => b.projectId)).not.toContain(idle.projectId);
    expect(projectsOf(await store().claim(['w3'], T0, later(WAIT), 10, WAIT))).toStrictEqual([waiting.projectId]);
    // Not due yet (claimed until its lease): no longer work for another acquire.
    await leases().release('w3', [{ projectId: waiting.projectId, platform: 'discord' }], T0);
    expect((await leases().acquire({ owner: 'w4', platform: 'discord', now: T0, until: later(WAIT), limit: 100, reconcileEveryMs: null })).map((b) => b.projectId)).not.toContain(
      waiting.projectId,
    );
  });

  it('a message given back (its bot let go mid-send) is due at once, its attempt not counted', async () => {
    const t = await shop({ owner: 'w1' });
    const [c] = await store().claim(['w1'], T0, later(WAIT), 10, WAIT);
    expect(c!.attempt).toBe(1);
    await store().giveBack(c!.id, later(5), "the bot's lease was lost while the message was out");
    expect(await row(t)).toMatchObject({ attempts: 0, last_error: "the bot's lease was lost while the message was out" });
    const [again] = await store().claim(['w1'], later(5), later(WAIT), 10, WAIT);
    expect(again).toMatchObject({ id: c!.id, attempt: 1 });
  });
});
