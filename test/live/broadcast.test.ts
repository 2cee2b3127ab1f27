import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { webhookBody } from '../../src/store/outbox.js';
import { createMembership, ISO_MS, UUID } from '../support/api.js';
import { future, type Tenant } from '../support/harness.js';
import { createLiveHarness, LiveClient, type LiveHarness } from './live-harness.js';
import { markWrites } from '../../src/database/wakeups.js';

/**
 * Broadcasts (docs/live-updates.md): a change made over REST reaches the sockets of that project
 * subscribed to its channel, as the webhook event object plus `channel`, once; nobody else gets
 * it. Absence is proved without waiting: the broadcaster emits in `seq` order, so a later event
 * that does arrive shows that an earlier one was not going to.
 */

let lh: LiveHarness;
beforeAll(async () => {
  lh = await createLiveHarness();
});
afterAll(() => lh.close());

async function extend(t: Tenant, userId: string, days = 40) {
  const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${userId}/extend`, payload: { extend: future(days).iso } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.new_end_date as string;
}

/** Writes an event the way a service's outbox insert does (for channels whose routes belong elsewhere). */
async function insertEvent(t: Tenant, type: string, data: Record<string, unknown>): Promise<string> {
  const [row] = rowsOf<{ id: string }>(
    await lh.h.database.db.execute(markWrites(sql`INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, ${type}, ${JSON.stringify(data)}::jsonb) RETURNING id`, ['events'])),
  );
  return row!.id;
}

async function subscribed(t: Tenant, ...channels: string[]): Promise<LiveClient> {
  const c = await lh.connect(t);
  for (const channel of channels) await c.act({ action: 'subscribe', channel }, 'subscribed');
  return c;
}

/**
 * Waits until the broadcaster has claimed every event of these projects (bounded). Under load it
 * can broadcast an event written before a socket subscribed after the subscription, and then that
 * socket rightly gets it: a test that counts what a socket receives settles earlier writes first.
 */
async function settled(...tenants: Tenant[]): Promise<void> {
  for (const t of tenants) {
    for (let i = 0; ; i++) {
      const [row] = rowsOf<{ n: number }>(
        await lh.h.database.db.execute(sql`SELECT count(*)::int AS n FROM events e JOIN event_broadcasts b ON b.seq = e.seq WHERE e.project_id = ${t.projectId} AND b.broadcast_at IS NULL`),
      );
      if (row!.n === 0) break;
      if (i === 500) throw new Error('events were not broadcast');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const eventOf = (c: LiveClient, type: string, nth = 0) =>
  c.until(() => c.events().filter((e) => e.event === type)[nth]?.payload, `${type} #${nth}`);

describe('memberships channel', () => {
  it('delivers an extend made over REST with the webhook event object plus channel', async () => {
    const t = await lh.tenant();
    const m = await createMembership(t);
    const c = await subscribed(t, 'memberships');
    const newEnd = await extend(t, m.user_id);
    const event = await eventOf(c, 'membership.extended');
    const [row] = rowsOf<{ id: string; ms: string; body: string }>(
      await lh.h.database.db.execute(sql`
        SELECT e.id, (extract(epoch FROM e.emitted_at) * 1000)::bigint::text AS ms, ${webhookBody('e')} AS body
        FROM events e WHERE e.project_id = ${t.projectId} AND e.type = 'membership.extended'`),
    );
    expect(event).toStrictEqual({
      event_id: row!.id,
      type: 'membership.extended',
      project_id: t.projectId,
      emitted_at: Number(row!.ms),
      data: {
        membership: { ...m, membership_end_date: newEnd },
        previous_end_date: m.membership_end_date,
      },
      channel: 'memberships',
    });
    // Exactly what a webhook receives, plus the channel.
    expect(event).toStrictEqual({ ...JSON.parse(row!.body), channel: 'memberships' });
    expect(event.event_id).toMatch(UUID);
    expect(newEnd).toMatch(ISO_MS);
  });

  it('delivers created, bulk-extended and deleted events too', async () => {
    const t = await lh.tenant();
    const c = await subscribed(t, 'memberships');
    const m = await createMembership(t);
    const bulk = await t.request({ method: 'PATCH', url: `${t.base}/memberships/extend`, payload: { extend: future(50).ms } });
    expect(bulk.statusCode, bulk.body).toBe(200);
    const del = await t.request({ method: 'DELETE', url: `${t.base}/memberships/${m.membership_id}` });
    expect(del.statusCode, del.body).toBe(204);
    expect((await eventOf(c, 'membership.created')).data).toStrictEqual({ membership: m });
    expect((await eventOf(c, 'membership.bulk-extended')).data).toStrictEqual({ total: 1, new_end_date: bulk.json().data.new_end_date });
    expect((await eventOf(c, 'membership.deleted')).channel).toBe('memberships');
    expect(c.events().map((e) => e.event)).toStrictEqual(['membership.created', 'membership.bulk-extended', 'membership.deleted']);
  });

  it('reaches only subscribed sockets of that project', async () => {
    const t = await lh.tenant();
    const other = await lh.tenant();
    const m = await createMembership(t);
    const otherMember = await createMembership(other);
    await settled(t, other);
    const subscriber = await subscribed(t, 'memberships');
    const idle = await subscribed(t);
    const plansOnly = await subscribed(t, 'plans');
    const left = await subscribed(t, 'memberships');
    await left.act({ action: 'unsubscribe', channel: 'memberships' }, 'unsubscribed');
    const otherProject = await subscribed(other, 'memberships');

    await extend(t, m.user_id);
    const first = await eventOf(subscriber, 'membership.extended');

    // Later events each of them does receive: had the first been theirs, it would have come before.
    await insertEvent(t, 'plan.created', { plan: { id: randomUUID() } });
    await eventOf(plansOnly, 'plan.created');
    await extend(other, otherMember.user_id);
    await eventOf(otherProject, 'membership.extended');
    for (const c of [idle, left]) await c.act({ action: 'subscribe', channel: 'memberships' }, 'subscribed');
    await extend(t, m.user_id, 45);
    const second = await eventOf(subscriber, 'membership.extended', 1);
    for (const c of [idle, left]) expect((await eventOf(c, 'membership.extended')).event_id).toBe(second.event_id);

    expect(plansOnly.events().map((e) => e.event)).toStrictEqual(['plan.created']);
    expect(otherProject.events().map((e) => e.payload.project_id)).toStrictEqual([other.projectId]);
    for (const c of [idle, left]) expect(c.events().map((e) => e.payload.event_id)).toStrictEqual([second.event_id]);
    expect(subscriber.events().map((e) => e.payload.event_id)).toStrictEqual([first.event_id, second.event_id]);
  });

  it('sends each event once to a socket, however many events there are', async () => {
    const t = await lh.tenant();
    const m = await createMembership(t);
    const c = await subscribed(t, 'memberships');
    for (let i = 0; i < 20; i++) await extend(t, m.user_id, 40 + i);
    await eventOf(c, 'membership.extended', 19);
    await insertEvent(t, 'membership.expired', { membership: m }); // a sentinel after the twenty
    await eventOf(c, 'membership.expired');
    const ids = c.events().filter((e) => e.event === 'membership.extended').map((e) => e.payload.event_id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });
});

describe('other channels', () => {
  it.each([
    ['plans', 'plan.updated', { plan: { id: 'p' } }],
    ['targets', 'target.added', { target: { id: 't' } }],
    ['webhook-deliveries', 'webhook.endpoint-disabled', { webhook_id: 'w', reason: 'failing', disabled_at: '2026-01-01T00:00:00.000Z' }],
    ['access', 'access.failed', { user_id: '1', target_id: 't', platform: 'discord', error: { code: '50013', message: 'Missing Permissions' } }],
  ])('carries %s events to their channel only', async (channel, type, data) => {
    const t = await lh.tenant();
    const c = await subscribed(t, channel);
    const members = await subscribed(t, 'memberships');
    const id = await insertEvent(t, type, data);
    const event = await eventOf(c, type);
    expect(event).toMatchObject({ event_id: id, type, project_id: t.projectId, data, channel });
    await insertEvent(t, 'membership.expired', { membership: {} });
    await eventOf(members, 'membership.expired');
    expect(members.events().map((e) => e.event)).toStrictEqual(['membership.expired']);
  });

  it('never broadcasts webhook.test', async () => {
    const t = await lh.tenant();
    const c = await subscribed(t, 'memberships', 'plans', 'targets', 'webhook-deliveries');
    await insertEvent(t, 'webhook.test', { message: 'test', webhook_id: randomUUID() });
    await insertEvent(t, 'plan.deleted', { plan: {} });
    await eventOf(c, 'plan.deleted');
    expect(c.events().map((e) => e.event)).toStrictEqual(['plan.deleted']);
  });
});
