import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { DeliveriesStore, type ClaimOptions } from '../../src/store/deliveries.store.js';
import type { Tenant } from '../support/harness.js';
import { createHook, createWebhookHarness, type WebhookHarness } from '../support/webhook-harness.js';

/**
 * The claim's fairness, on both storages: whose deliveries one claim takes when one endpoint has
 * a long backlog, when endpoints or projects are at the worker's bounds, how projects take turns,
 * how a lap over many endpoints goes round, and that two claims at once never share a delivery.
 * Deliveries are real fan-outs of event rows (a backlog is written as an import writes events);
 * nothing is sent: the claim alone is under test (test/storage/webhook-fairness.test.ts has the worker).
 */

describe('delivery claim: fair across endpoints and projects', () => {
  let w: WebhookHarness;
  let store: DeliveriesStore;
  beforeAll(async () => {
    w = await createWebhookHarness({ manualClock: true });
    store = new DeliveriesStore(w.h.database.db);
  });
  afterAll(() => w.close());
  // Every test starts from no pending delivery: what earlier tests left is cancelled.
  const settle = () => w.h.database.db.execute(sql`UPDATE webhook_deliveries SET status = 'cancelled' WHERE status = 'pending'`);

  /** `n` events aimed at one webhook of `t` (its deliveries only), written in one statement. */
  async function backlog(t: Tenant, webhookId: string, n: number): Promise<void> {
    await w.h.database.db.execute(sql`
      INSERT INTO events (project_id, type, data, target_webhook_id)
      SELECT ${t.projectId}, 'membership.created', jsonb_build_object('n', g), ${webhookId}
      FROM generate_series(1, ${n}::int) g`);
  }

  const hook = async (t: Tenant, name: string) => (await createHook(t, `http://127.0.0.1:9/${name}`)).id;

  const claim = (o: Partial<ClaimOptions> = {}) => {
    const now = w.clock.now();
    return store.claim({
      workerId: 'w1',
      now,
      leaseUntil: new Date(now.getTime() + 60_000),
      limit: 10,
      perEndpoint: 4,
      inFlight: new Map(),
      perProject: 100,
      projectsInFlight: new Map(),
      ...o,
    });
  };

  const countBy = (ids: string[]) => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());

  it("takes every endpoint's turn in one claim, however long and however old one endpoint's backlog", async () => {
    await settle();
    const a = await w.tenant();
    const b = await w.tenant();
    const slow = await hook(a, 'slow');
    const other = await hook(a, 'other');
    const fresh = await hook(b, 'fresh');
    await backlog(a, slow, 2_000);
    await backlog(a, other, 1);
    await backlog(b, fresh, 1);
    const { deliveries } = await claim();
    const claimed = countBy(deliveries.map((d) => d.webhookId));
    // The 2,000 older deliveries fill any due-order window; the endpoints behind them still get theirs.
    expect(claimed).toStrictEqual(new Map([[slow, 4], [other, 1], [fresh, 1]]));
    expect(deliveries.find((d) => d.webhookId === fresh)).toMatchObject({ projectId: b.projectId, attempt: 1, eventType: 'membership.created' });
  });

  it('skips endpoints and projects at their bound in the claim itself, and counts what the worker holds', async () => {
    await settle();
    const a = await w.tenant();
    const b = await w.tenant();
    const slow = await hook(a, 'slow');
    const other = await hook(a, 'other');
    const fresh = await hook(b, 'fresh');
    await backlog(a, slow, 500);
    await backlog(a, other, 5);
    await backlog(b, fresh, 5);

    // `slow` is full: nothing of it; the others up to their room.
    let got = await claim({ inFlight: new Map([[slow, 4], [other, 3]]) });
    expect(countBy(got.deliveries.map((d) => d.webhookId))).toStrictEqual(new Map([[other, 1], [fresh, 4]]));

    // Project a is full: nothing of any of its endpoints, however much room they have.
    got = await claim({ projectsInFlight: new Map([[a.projectId, 100]]) });
    expect(new Set(got.deliveries.map((d) => d.webhookId))).toStrictEqual(new Set([fresh]));

    // Project a has room for two more: two, over its endpoints in turn.
    got = await claim({ projectsInFlight: new Map([[a.projectId, 98]]) });
    expect(countBy(got.deliveries.filter((d) => d.projectId === a.projectId).map((d) => d.webhookId))).toStrictEqual(
      new Map([[slow, 1], [other, 1]]),
    );
  });

  it('claims nothing, without failing, when nothing is pending or everything due is at its bound', async () => {
    await settle();
    expect(await claim()).toStrictEqual({ deliveries: [], cursor: null });
    const a = await w.tenant();
    const full = await hook(a, 'full');
    const other = await hook(a, 'other');
    await backlog(a, full, 20);
    await backlog(a, other, 20);
    expect(await claim({ inFlight: new Map([[full, 4]]), projectsInFlight: new Map([[a.projectId, 100]]) })).toStrictEqual({ deliveries: [], cursor: null });
    expect(await claim({ inFlight: new Map([[full, 4], [other, 4]]) })).toStrictEqual({ deliveries: [], cursor: null });
  });

  it('takes turns by project, then by endpoint: a project with many endpoints does not outnumber one with one', async () => {
    await settle();
    const many = await w.tenant();
    const one = await w.tenant();
    for (let i = 0; i < 5; i++) await backlog(many, await hook(many, `m${i}`), 10);
    await backlog(one, await hook(one, 'single'), 10);
    const { deliveries } = await claim({ limit: 6, perEndpoint: 10 });
    expect(countBy(deliveries.map((d) => d.projectId))).toStrictEqual(new Map([[many.projectId, 3], [one.projectId, 3]]));
    // Within the busy project, three different endpoints: each one's first before anyone's second.
    expect(new Set(deliveries.filter((d) => d.projectId === many.projectId).map((d) => d.webhookId)).size).toBe(3);
  });

  it('walks the endpoints in laps: a claim that stops part-way says where, and the next goes on from there', async () => {
    await settle();
    const t = await w.tenant();
    const hooks: string[] = [];
    for (let i = 0; i < 12; i++) hooks.push(await hook(t, `lap${i}`));
    // The first endpoint's backlog is the oldest: the due-order window sees nothing else.
    await backlog(t, hooks[0]!, 50);
    for (const id of hooks.slice(1)) await backlog(t, id, 1);
    const seen = new Set<string>();
    let cursor: string | null = null;
    let claims = 0;
    do {
      // Two a claim, and a walk of at most eight endpoints: a lap needs several claims.
      const got = await claim({ limit: 2, perEndpoint: 1, inFlight: new Map([[hooks[0]!, 1]]), cursor });
      expect(got.deliveries.length).toBeLessThanOrEqual(2);
      for (const d of got.deliveries) seen.add(d.webhookId);
      cursor = got.cursor;
      claims++;
    } while (cursor !== null && claims < 20);
    expect(cursor).toBeNull();
    expect(claims).toBeGreaterThan(1);
    // Every endpoint but the full one got its delivery within the lap.
    expect(seen).toStrictEqual(new Set(hooks.slice(1)));
  });

  it('never gives one delivery to two claims made at once (SKIP LOCKED), and leases what it gives', async () => {
    await settle();
    const t = await w.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await hook(t, `race${i}`));
    for (const id of ids) await backlog(t, id, 30);
    const claims = await Promise.all(
      ['w1', 'w2', 'w3'].map((workerId) => claim({ workerId, limit: 40, perEndpoint: 10 })),
    );
    const all = claims.flatMap((c) => c.deliveries.map((d) => d.id));
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBeGreaterThan(0);
    const leased = rowsOf<{ leased_by: string; n: number }>(
      await w.h.database.db.execute(sql`
        SELECT leased_by, count(*)::int AS n FROM webhook_deliveries
        WHERE project_id = ${t.projectId} AND leased_by IS NOT NULL GROUP BY leased_by ORDER BY leased_by`),
    );
    expect(leased).toStrictEqual(
      claims.map((c, i) => ({ leased_by: `w${i + 1}`, n: c.deliveries.length })).filter((r) => r.n > 0),
    );
  });
});
