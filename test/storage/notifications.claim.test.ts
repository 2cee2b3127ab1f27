import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { NotificationsStore } from '../../src/store/notifications.store.js';
import { RetentionStore } from '../../src/store/retention.store.js';
import { createMembership, eventRows } from '../support/api.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { onPostgres, useHarness, type Tenant } from '../support/harness.js';
import { turnOffMessages } from '../support/front-desk.js';

/**
 * The confirmations' SQL (src/store/notifications.store.ts) on both storages: one row per payment
 * key; claims that never hand one row to two claimers, nor again before its lease ends; a Telegram
 * confirmation held until the member's access is settled, then carrying their invite link; a
 * member recorded unreachable once, with one `notification.failed`.
 */

const T0 = new Date('2030-01-01T00:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const WAIT = 60_000;
/** The claimer's access worker holds the project's bot (claims take only the rows of bots held). */
const OWNER = 'this-worker';
const OWNERS = [OWNER];
const LEASED_UNTIL = '2100-01-01T00:00:00.000Z';

describe(`notifications store (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();
  const store = () => new NotificationsStore(h.database.db);
  // Claims take any project's due rows: each test starts from none (the database is this file's own).
  beforeEach(async () => {
    await h.database.db.execute(sql`DELETE FROM notifications`);
  });

  async function withBot(t: Tenant, platform: 'discord' | 'telegram') {
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, lease_owner, lease_expires_at)
      VALUES (${t.projectId}, ${platform}, 'v1.dummy.sealed', ${String(Date.now()) + String(Math.floor(Math.random() * 1000))}, 'bot', ${OWNER}, ${LEASED_UNTIL}::timestamptz)`);
    // Members made through the API here stand for paid ones: no welcome, the messages are the store's own.
    await turnOffMessages(t, 'welcome');
  }

  async function paidMember(t: Tenant, planId: string, key: string) {
    const m = await createMembership(t, { planId });
    expect(await store().queueConfirmation({ projectId: t.projectId, userId: m.user_id, planId, paymentKey: key }, T0)).toBe(true);
    return m;
  }

  it('one row per payment key; nothing is queued for a project without a bot', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const m = await createMembership(t, { planId: plan.plan_id });
    const q = { projectId: t.projectId, userId: m.user_id, planId: plan.plan_id, paymentKey: 'pi_1' };
    expect(await store().queueConfirmation(q, T0)).toBe(false);
    await withBot(t, 'discord');
    expect(await store().queueConfirmation(q, T0)).toBe(true);
    expect(await store().queueConfirmation(q, T0)).toBe(false);
    expect(await store().queueConfirmation({ ...q, paymentKey: 'pi_2' }, T0)).toBe(true);
    const rows = rowsOf<{ dedupe_key: string; platform: string }>(
      await h.database.db.execute(sql`SELECT dedupe_key, platform FROM notifications WHERE project_id = ${t.projectId} ORDER BY dedupe_key`),
    );
    expect(rows).toStrictEqual([
      { dedupe_key: 'payment:pi_1', platform: 'discord' },
      { dedupe_key: 'payment:pi_2', platform: 'discord' },
    ]);
  });

  it('two claims at once share no row; a claimed row comes back only after its lease, as attempt 2', async () => {
    const t = await h.tenant();
    await withBot(t, 'discord');
    const plan = await createPlan(t, { plan_name: 'Gold' });
    for (let i = 0; i < 6; i++) await paidMember(t, plan.plan_id, `pi_${i}`);
    const [a, b] = await Promise.all([store().claim(OWNERS, T0, later(WAIT), 4, WAIT), store().claim(OWNERS, T0, later(WAIT), 4, WAIT)]);
    const ids = [...a!, ...b!].map((c) => c.id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    expect(a![0]).toMatchObject({ platform: 'discord', planName: 'Gold', active: true, attempt: 1, bot: 'held', invites: [] });
    expect(await store().claim(OWNERS, later(WAIT - 1), later(2 * WAIT), 10, WAIT)).toStrictEqual([]);
    const again = await store().claim(OWNERS, later(WAIT), later(2 * WAIT), 10, WAIT);
    expect(again.map((c) => c.attempt)).toStrictEqual([2, 2, 2, 2, 2, 2]);
    await store().sent(again[0]!.id, later(WAIT));
    expect((await store().claim(OWNERS, later(3 * WAIT), later(4 * WAIT), 10, WAIT)).map((c) => c.id)).not.toContain(again[0]!.id);
  });

  it('a Telegram confirmation waits for the member’s access to settle, then carries their current invite link', async () => {
    const t = await h.tenant();
    await withBot(t, 'telegram');
    const target = await createTarget(t, { platform: 'telegram', kind: 'group', external_id: '-1001234567890' });
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, target.target_id);
    const m = await paidMember(t, plan.plan_id, 'pi_tg');
    expect(await store().claim(OWNERS, T0, later(WAIT), 10, WAIT)).toStrictEqual([]);
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${t.projectId}, ${target.target_id}, ${m.user_id}, 'telegram', 'group', '-1001234567890', 'kick', 'granted', 'waiting_for_member')`);
    await h.database.db.execute(sql`
      INSERT INTO telegram_invites (project_id, target_id, user_id, membership_id, chat_id, bot_id, invite_link, name, expires_at)
      VALUES (${t.projectId}, ${target.target_id}, ${m.user_id}, ${m.membership_id}, '-1001234567890', '1', 'https://t.me/+abcdefgh12345678', 'm', ${later(WAIT).toISOString()}::timestamptz)`);
    const [claimed] = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(claimed).toMatchObject({ platform: 'telegram', invites: ['https://t.me/+abcdefgh12345678'] });
  });

  it('a member is recorded unreachable once, with one notification.failed; clearing makes them reachable', async () => {
    const t = await h.tenant();
    await withBot(t, 'discord');
    const plan = await createPlan(t);
    const m = await paidMember(t, plan.plan_id, 'pi_a');
    await store().queueConfirmation({ projectId: t.projectId, userId: m.user_id, planId: plan.plan_id, paymentKey: 'pi_b' }, T0);
    const claimed = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(claimed).toHaveLength(2);
    expect(await store().unreachable(claimed[0]!, 'dm_closed', '403: 50007 Cannot send messages to this user', T0)).toBe(true);
    expect(await store().unreachable(claimed[1]!, 'dm_closed', '403: 50007 Cannot send messages to this user', T0)).toBe(false);
    expect(await store().unreachableOf(t.projectId, m.user_id)).toStrictEqual([{ platform: 'discord', reason: 'dm_closed', since: T0 }]);
    const failed = (await eventRows(h, t.projectId)).filter((e) => e.type === 'notification.failed').map((e) => e.data);
    expect(failed).toStrictEqual([{ user_id: m.user_id, channel: 'discord', reason: 'dm_closed' }]);
    expect(await store().clearUnreachable(t.projectId, m.user_id, 'discord')).toBe(true);
    expect(await store().clearUnreachable(t.projectId, m.user_id, 'discord')).toBe(false);
    expect(await store().unreachableOf(t.projectId, m.user_id)).toStrictEqual([]);
  });

  it('the history pruner deletes settled confirmations past the retention, never a pending one', async () => {
    const t = await h.tenant();
    await withBot(t, 'discord');
    const plan = await createPlan(t);
    await paidMember(t, plan.plan_id, 'pi_sent');
    await paidMember(t, plan.plan_id, 'pi_pending');
    const [first] = await store().claim(OWNERS, T0, later(WAIT), 1, WAIT);
    await store().sent(first!.id, T0);
    const pruned = await new RetentionStore(h.database.db).pruneNotifications(later(1), 10);
    expect(pruned).toBe(1);
    const left = rowsOf<{ state: string }>(await h.database.db.execute(sql`SELECT state FROM notifications WHERE project_id = ${t.projectId}`));
    expect(left).toStrictEqual([{ state: 'pending' }]);
  });
});
