import { createLogger } from '../../src/logger.js';
import { openDatabase } from '../../src/database/db.js';
import { ExpiryStore } from '../../src/store/expiry.store.js';
import { ExpirySweeper } from '../../src/domain/memberships/expiry.sweeper.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMembership, eventRows, membershipRow } from '../support/api.js';
import { onPostgres, type Tenant } from '../support/harness.js';
import { createHook, createWebhookHarness, deliveryRows, eventually, webhookBodyOf, type WebhookHarness } from '../support/webhook-harness.js';

/**
 * The expiry sweeper: memberships past their end date become expired with one
 * `membership.expired` event each — exactly once, even with several sweepers at once.
 */

const DAY = 86_400_000;

describe('expiry sweeper', () => {
  let w: WebhookHarness;
  beforeAll(async () => {
    w = await createWebhookHarness({ manualClock: true });
  });
  afterAll(() => w.close());
  beforeEach(() => w.h.reset());

  const sweeper = (store = new ExpiryStore(w.h.database.db), batchSize = 1000, lanes?: number) =>
    new ExpirySweeper(store, w.clock, createLogger('silent'), { intervalMs: 60_000, batchSize, ...(lanes ? { lanes } : {}) });
  const expiredEvents = async (t: Tenant) => (await eventRows(w.h, t.projectId)).filter((e) => e.type === 'membership.expired');
  const endingIn = (t: Tenant, ms: number) => createMembership(t, { endDate: new Date(w.clock.now().getTime() + ms).toISOString() });

  it('expires a membership once its end date passes, with a membership.expired event delivered like any other', async () => {
    const t = await w.tenant();
    await createHook(t, 'http://127.0.0.1:9/expiry');
    const m = await endingIn(t, DAY);
    expect(await sweeper().sweepOnce()).toBe(0);
    w.advance(DAY - 1);
    expect(await sweeper().sweepOnce()).toBe(0);
    w.advance(1);
    expect(await sweeper().sweepOnce()).toBe(1);
    expect((await membershipRow(w.h, t.projectId, m.user_id))?.status).toBe('expired');

    const expired = (await eventRows(w.h, t.projectId)).filter((e) => e.type === 'membership.expired');
    // The event carries the membership exactly as the API shows it.
    const api = (await t.request({ method: 'GET', url: `${t.base}/memberships/${m.membership_id}` })).json().data;
    expect(api.status).toBe('expired');
    expect(expired).toStrictEqual([{ type: 'membership.expired', project_id: t.projectId, data: { membership: api } }]);
    const delivery = (await deliveryRows(w.h, t.projectId)).find((d) => d.event_type === 'membership.expired');
    expect(JSON.parse(await webhookBodyOf(w.h, delivery!.event_id)).data).toStrictEqual({ membership: api });

    expect(await sweeper().sweepOnce()).toBe(0);
    expect((await eventRows(w.h, t.projectId)).filter((e) => e.type === 'membership.expired')).toHaveLength(1);
  });

  it('announces each expiry exactly once with several sweepers running at once', async () => {
    const t = await w.tenant();
    const members = await Promise.all(Array.from({ length: 40 }, () => endingIn(t, DAY)));
    w.advance(DAY);
    // On PostgreSQL the sweepers use separate connection pools, as separate nodes would.
    const other = onPostgres ? await openDatabase(w.h.storage) : null;
    try {
      const stores = [new ExpiryStore(w.h.database.db), new ExpiryStore((other ?? w.h.database).db)];
      const counts = await Promise.all(
        Array.from({ length: 6 }, (_, i) => sweeper(stores[i % 2], 3).sweepOnce()),
      );
      expect(counts.reduce((a, b) => a + b, 0)).toBe(40);
    } finally {
      await other?.close();
    }
    const expired = (await eventRows(w.h, t.projectId)).filter((e) => e.type === 'membership.expired');
    expect(expired).toHaveLength(40);
    const ids = expired.map((e) => (e.data as { membership: { membership_id: string } }).membership.membership_id);
    expect(new Set(ids)).toStrictEqual(new Set(members.map((m) => m.membership_id)));
  });

  it('shows a membership expired from its end date on, by the app clock, before any sweep: GET, list and later events', async () => {
    const t = await w.tenant();
    const m = await endingIn(t, DAY);
    const get = async () => (await t.request({ method: 'GET', url: `${t.base}/memberships/${m.membership_id}` })).json().data;
    const list = async () => (await t.request({ method: 'GET', url: `${t.base}/memberships` })).json().data;
    w.advance(DAY - 1);
    expect(await get()).toStrictEqual(m);
    w.advance(1);
    const expired = { ...m, status: 'expired' };
    expect(await get()).toStrictEqual(expired);
    expect(await list()).toStrictEqual([expired]);
    // Nothing swept: the stored marker still says active, and no expired event exists yet.
    expect((await membershipRow(w.h, t.projectId, m.user_id))?.status).toBe('active');
    expect(await expiredEvents(t)).toHaveLength(0);
    // An event written later carries the membership as the API shows it at that instant.
    const del = await t.request({ method: 'DELETE', url: `${t.base}/memberships/${m.membership_id}` });
    expect(del.statusCode, del.body).toBe(204);
    const deleted = (await eventRows(w.h, t.projectId)).filter((e) => e.type === 'membership.deleted');
    expect(deleted.map((e) => e.data)).toStrictEqual([{ membership: expired }]);
    // A deleted membership is not announced as expired afterwards.
    expect(await sweeper().sweepOnce()).toBe(0);
  });

  it('drains a backlog larger than a batch in one sweep, one event per membership, with one lane or several', async () => {
    const t = await w.tenant();
    await Promise.all(Array.from({ length: 25 }, () => endingIn(t, DAY)));
    w.advance(DAY);
    expect(await sweeper(undefined, 4, 1).sweepOnce()).toBe(25);
    expect(await expiredEvents(t)).toHaveLength(25);

    const u = await w.tenant();
    const more = await Promise.all(Array.from({ length: 25 }, () => endingIn(u, DAY)));
    w.advance(DAY);
    expect(await sweeper(undefined, 4, 3).sweepOnce()).toBe(25);
    const ids = (await expiredEvents(u)).map((e) => (e.data as { membership: { membership_id: string } }).membership.membership_id);
    expect(ids.sort()).toStrictEqual(more.map((m) => m.membership_id).sort());
  });

  it('lets a later extend make the membership active again; its next expiry is announced again', async () => {
    const t = await w.tenant();
    const m = await endingIn(t, DAY);
    w.advance(DAY);
    expect(await sweeper().sweepOnce()).toBe(1);
    const extend = new Date(w.clock.now().getTime() + 2 * DAY).toISOString();
    const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${m.user_id}/extend`, payload: { extend } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await membershipRow(w.h, t.projectId, m.user_id))?.status).toBe('active');
    w.advance(2 * DAY);
    expect(await sweeper().sweepOnce()).toBe(1);
    expect((await eventRows(w.h, t.projectId)).map((e) => e.type)).toStrictEqual([
      'membership.created',
      'membership.expired',
      'membership.extended',
      'membership.expired',
    ]);
  });

  it('runs on its own inside the runtime', async () => {
    const t = await w.tenant();
    const m = await endingIn(t, DAY);
    w.advance(DAY);
    const runtime = await w.startRuntime({ sweepIntervalMs: 20, pollMs: 60_000 });
    try {
      await eventually(async () => (await membershipRow(w.h, t.projectId, m.user_id))?.status === 'expired', 'the sweeper expired it');
    } finally {
      await runtime.stop();
    }
  });
});
