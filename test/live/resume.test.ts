import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LIVE_NAMESPACE } from '../../src/live/live-updates.js';
import { rowsOf } from '../../src/database/db.js';
import { createMembership } from '../support/api.js';
import { future, type Tenant } from '../support/harness.js';
import { createLiveHarness, type LiveClient, type LiveHarness } from './live-harness.js';
import { markWrites } from '../../src/database/wakeups.js';

/**
 * Resume (beyond the original product): a subscribe with `after: <event_id>` first
 * gets the channel's events the client missed since that event, then `subscribed` with how many
 * were replayed; an id the project does not have, or one older than TENURE_EVENT_RETENTION, is
 * an error rather than a silent gap.
 */

let lh: LiveHarness;
beforeAll(async () => {
  lh = await createLiveHarness();
});
afterAll(() => lh.close());

async function extend(t: Tenant, userId: string, days: number): Promise<void> {
  const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${userId}/extend`, payload: { extend: future(days).iso } });
  expect(res.statusCode, res.body).toBe(200);
}

const eventOf = (c: LiveClient, type: string, nth = 0) =>
  c.until(() => c.events().filter((e) => e.event === type)[nth]?.payload, `${type} #${nth}`);

/**
 * A tenant with one member, and the event id of the first extend a subscriber saw. Events
 * broadcast within a second before a resume point are replayed too (possible late commits, see
 * LiveEventsStore); the test moves what was broadcast before it a minute back and it half a
 * minute, so that replays hold exactly what was missed. `late commits` below covers that margin.
 */
async function seenOne() {
  const t = await lh.tenant();
  const m = await createMembership(t);
  const first = await lh.connect(t);
  await first.act({ action: 'subscribe', channel: 'memberships' }, 'subscribed');
  await extend(t, m.user_id, 40);
  const seen = (await eventOf(first, 'membership.extended')).event_id as string;
  first.socket.disconnect();
  await ageBroadcasts(t, seen);
  return { t, m, seen };
}

/** Waits until the broadcaster has claimed every event of the project (bounded). */
async function settled(t: Tenant): Promise<void> {
  for (let i = 0; i < 250; i++) {
    const [row] = rowsOf<{ n: number }>(
      await lh.h.database.db.execute(sql`SELECT count(*)::int AS n FROM events e JOIN event_broadcasts b ON b.seq = e.seq WHERE e.project_id = ${t.projectId} AND b.broadcast_at IS NULL`),
    );
    if (row!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('events were not broadcast');
}

/** Moves the project's broadcasts a minute back, and `resumeAt`'s half a minute (see seenOne). */
async function ageBroadcasts(t: Tenant, resumeAt: string): Promise<void> {
  await settled(t);
  await lh.h.database.db.execute(sql`
    UPDATE event_broadcasts b SET broadcast_at = b.broadcast_at - CASE WHEN e.id = ${resumeAt} THEN interval '30 seconds' ELSE interval '1 minute' END
    FROM events e WHERE e.seq = b.seq AND e.project_id = ${t.projectId}`);
}

const missedEvents = async (t: Tenant) =>
  rowsOf<{ id: string }>(await lh.h.database.db.execute(sql`SELECT id FROM events WHERE project_id = ${t.projectId} ORDER BY seq`));

describe('resume with after', () => {
  it('replays the channel’s events missed since the given one, then says subscribed with their count', async () => {
    const { t, m, seen } = await seenOne();
    // While disconnected: two extends, a plan event (another channel) and another project's extend.
    await extend(t, m.user_id, 41);
    await lh.h.database.db.execute(markWrites(sql`INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, 'plan.created', '{"plan": {}}'::jsonb)`, ['events']));
    await extend(t, m.user_id, 42);
    const other = await lh.tenant();
    await extend(other, (await createMembership(other)).user_id, 40);
    const ids = (await missedEvents(t)).map((r) => r.id);
    const missed = ids.slice(ids.indexOf(seen) + 1);
    expect(missed).toHaveLength(3);
    // Missed while disconnected: broadcast before this client comes back, not while it subscribes.
    await settled(t);

    const c = await lh.connect(t);
    const answer = await c.act({ action: 'subscribe', channel: 'memberships', after: seen }, 'subscribed');
    expect(answer).toStrictEqual({ type: 'subscribed', channel: 'memberships', replayed: 2 });
    const replayed = c.events();
    expect(replayed.map((e) => e.event)).toStrictEqual(['membership.extended', 'membership.extended']);
    expect(replayed.map((e) => e.payload.event_id)).toStrictEqual([missed[0], missed[2]]);
    for (const e of replayed) expect(e.payload).toMatchObject({ project_id: t.projectId, channel: 'memberships' });
    // The replay came before `subscribed`.
    const order = c.received.map((r) => (r.event === 'message' ? r.payload.type : r.event));
    expect(order).toStrictEqual(['ready', 'membership.extended', 'membership.extended', 'subscribed']);

    // And it is subscribed: the next change arrives live.
    await extend(t, m.user_id, 43);
    await eventOf(c, 'membership.extended', 2);
  });

  it('replays nothing when nothing was missed', async () => {
    const { t, seen } = await seenOne();
    const c = await lh.connect(t);
    expect(await c.act({ action: 'subscribe', channel: 'memberships', after: seen }, 'subscribed')).toStrictEqual({
      type: 'subscribed',
      channel: 'memberships',
      replayed: 0,
    });
    expect(c.events()).toStrictEqual([]);
  });

  it('accepts an event of another channel of the project as the resume point', async () => {
    const { t, m } = await seenOne();
    const [planEvent] = rowsOf<{ id: string }>(
      await lh.h.database.db.execute(markWrites(sql`INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, 'plan.created', '{"plan": {}}'::jsonb) RETURNING id`, ['events'])),
    );
    await ageBroadcasts(t, planEvent!.id);
    await extend(t, m.user_id, 44);
    const c = await lh.connect(t);
    expect(await c.act({ action: 'subscribe', channel: 'memberships', after: planEvent!.id }, 'subscribed')).toMatchObject({ replayed: 1 });
  });

  it('leaves out events older than the retention', async () => {
    const { t, m, seen } = await seenOne();
    await extend(t, m.user_id, 41);
    await extend(t, m.user_id, 42);
    const ids = (await missedEvents(t)).map((r) => r.id);
    const [old, recent] = ids.slice(ids.indexOf(seen) + 1);
    await lh.h.database.db.execute(sql`UPDATE events SET emitted_at = now() - interval '25 hours' WHERE id = ${old!}`);
    await settled(t);
    const c = await lh.connect(t);
    expect(await c.act({ action: 'subscribe', channel: 'memberships', after: seen }, 'subscribed')).toMatchObject({ replayed: 1 });
    expect(c.events().map((e) => e.payload.event_id)).toStrictEqual([recent]);
  });
});

describe('resume refused', () => {
  it.each([
    ['an event id nobody has', async () => randomUUID(), /^No event [0-9a-f-]{36} in this project/],
    ['an event of another project', async () => (await seenOne()).seen, /^No event [0-9a-f-]{36} in this project/],
  ])('answers %s with RESUME_UNAVAILABLE, and does not subscribe', async (_what, after, message) => {
    const { t, m } = await seenOne();
    const c = await lh.connect(t);
    const id = await after();
    expect(await c.act({ action: 'subscribe', channel: 'memberships', after: id }, 'error')).toStrictEqual({
      type: 'error',
      error_code: 'RESUME_UNAVAILABLE',
      message: expect.stringMatching(message),
      channel: 'memberships',
    });
    // Not subscribed: an extend does not arrive, while a plain subscribe afterwards works.
    await extend(t, m.user_id, 41);
    expect(await c.act({ action: 'subscribe', channel: 'plans' }, 'subscribed')).toStrictEqual({ type: 'subscribed', channel: 'plans' });
    await lh.h.database.db.execute(markWrites(sql`INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, 'plan.created', '{"plan": {}}'::jsonb)`, ['events']));
    await eventOf(c, 'plan.created');
    expect(c.events().map((e) => e.event)).toStrictEqual(['plan.created']);
  });

  it('answers an event older than the retention with RESUME_UNAVAILABLE', async () => {
    const { t, seen } = await seenOne();
    await lh.h.database.db.execute(sql`UPDATE events SET emitted_at = now() - interval '2 days' WHERE id = ${seen}`);
    const c = await lh.connect(t);
    expect(await c.act({ action: 'subscribe', channel: 'memberships', after: seen }, 'error')).toStrictEqual({
      type: 'error',
      error_code: 'RESUME_UNAVAILABLE',
      message: `Event ${seen} is older than the event retention: resubscribe without "after" and reload the state over the REST API`,
      channel: 'memberships',
    });
  });
});

describe('late commits', () => {
  it('replays an event with a lower seq that was broadcast after (or just before) the resume point', async () => {
    const { t, m } = await seenOne();
    await extend(t, m.user_id, 41);
    await extend(t, m.user_id, 42);
    await extend(t, m.user_id, 43);
    await settled(t);
    const ids = (await missedEvents(t)).map((r) => r.id);
    const [late, lateish, resumeAt] = ids.slice(-3) as [string, string, string];
    // `late` took its seq before the resume point's but was broadcast after it (a late commit);
    // `lateish` was broadcast within the margin before it. Both may have been missed.
    await lh.h.database.db.execute(sql`
      WITH r AS (SELECT rb.broadcast_at FROM events re JOIN event_broadcasts rb ON rb.seq = re.seq WHERE re.id = ${resumeAt})
      UPDATE event_broadcasts b SET broadcast_at = r.broadcast_at + CASE WHEN e.id = ${late} THEN interval '1 second' ELSE interval '-500 milliseconds' END
      FROM r, events e WHERE e.seq = b.seq AND e.id IN (${late}, ${lateish})`);
    const c = await lh.connect(t);
    expect(await c.act({ action: 'subscribe', channel: 'memberships', after: resumeAt }, 'subscribed')).toMatchObject({ replayed: 2 });
    expect(c.events().map((e) => e.payload.event_id)).toStrictEqual([late, lateish]);
  });
});

describe('a long backlog', () => {
  const BACKLOG = 3_000;
  const PAGE = 500;

  it.each(['websocket', 'polling'] as const)(
    `replays ${BACKLOG} events complete and in order, a page at a time, each read once the last was written out (%s)`,
    async (transport) => {
      const { t, seen } = await seenOne();
      await lh.h.database.db.execute(
        markWrites(
          sql`INSERT INTO events (project_id, type, data)
              SELECT ${t.projectId}, 'plan.created', jsonb_build_object('plan', jsonb_build_object('n', g)) FROM generate_series(1, ${BACKLOG}) g`,
          ['events'],
        ),
      );
      await settled(t);
      const missed = rowsOf<{ id: string }>(
        await lh.h.database.db.execute(sql`SELECT id FROM events WHERE project_id = ${t.projectId} AND type = 'plan.created' ORDER BY seq`),
      ).map((r) => r.id);
      expect(missed).toHaveLength(BACKLOG);

      const c = lh.client({ token: t.key, project_id: t.projectId }, { transports: [transport] });
      const conn = lh.live.io.of(LIVE_NAMESPACE).sockets.get(await c.ready())!.conn;
      // Observes the real store (calls through): at each page read, what the connection still
      // holds unsent (Engine.IO's queue, read for the test's sake only).
      const store = lh.h.container.stores.liveEvents;
      const readPage = store.replayPage.bind(store);
      const unsentAtReads: number[] = [];
      const observer = vi.spyOn(store, 'replayPage').mockImplementation((...args) => {
        unsentAtReads.push((conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length);
        return readPage(...args);
      });
      try {
        const answer = await c.act({ action: 'subscribe', channel: 'plans', after: seen }, 'subscribed');
        expect(answer).toStrictEqual({ type: 'subscribed', channel: 'plans', replayed: BACKLOG });
      } finally {
        observer.mockRestore();
      }
      expect(c.events().map((e) => e.payload.event_id)).toStrictEqual(missed);
      // Six full pages and the empty one that ends the replay, each read with nothing left unsent:
      // never more than one page of the backlog in the process.
      expect(unsentAtReads).toStrictEqual(Array<number>(BACKLOG / PAGE + 1).fill(0));
    },
  );
});
