import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from '../../src/database/db.js';
import type { MoneySeed } from './money-seed.js';
import type { Storage } from './seed.js';

/**
 * What the dashboard's members pages read beyond memberships and payments (bench/dashboard.ts),
 * added to a money seed (bench/lib/money-seed.ts) in the shares docs/dashboard-members.md's
 * timings were taken with: every member a user (a first name for nine in ten, one of 100 names, so
 * a name matches about 1 % of the project; a username for two in three), 40 % with a Stripe
 * subscription (1 % past due, 2 % in a trial, 2 % with their renewal cancelled), 0.1 % banned,
 * one access row each on one of two targets (0.5 % failed, 1.9 % waiting for the member), 1 %
 * unreachable; and one member, the "whale", with WHALE_PAYMENTS payments more, messages, and
 * access on both targets.
 */

export interface MembersSeed {
  /** The whale's user id. */
  whale: string;
  whalePayments: number;
  /** A first name that about 1 % of the members have. */
  commonName: string;
}

const WHALE = '2';
const WHALE_PAYMENTS = 5_000;
const WHALE_MESSAGES = 300;

const NAMES = [
  'Olivia', 'Liam', 'Emma', 'Noah', 'Amelia', 'Oliver', 'Ava', 'Elijah', 'Sophia', 'Lucas', 'Mia', 'Levi', 'Isabella', 'Mateo', 'Charlotte', 'Ezra',
  'Luna', 'Asher', 'Harper', 'James', 'Gianna', 'Leo', 'Evelyn', 'Ethan', 'Aurora', 'Sebastian', 'Ellie', 'Jack', 'Hazel', 'Henry', 'Nova', 'Hudson',
  'Layla', 'Maverick', 'Willow', 'Kai', 'Ivy', 'Ezekiel', 'Violet', 'Theodore', 'Eleanor', 'Elias', 'Chloe', 'Grayson', 'Lily', 'Wyatt', 'Penelope',
  'Jayden', 'Stella', 'Luca', 'Nora', 'Daniel', 'Emilia', 'Josiah', 'Zoey', 'Benjamin', 'Isla', 'Michael', 'Elena', 'Owen', 'Naomi', 'Samuel', 'Paisley',
  'Jackson', 'Camila', 'Aiden', 'Riley', 'Waylon', 'Avery', 'Gabriel', 'Lucy', 'Carter', 'Mila', 'Julian', 'Addison', 'Joseph', 'Leilani', 'David',
  'Madison', 'Santiago', 'Everly', 'Isaiah', 'Aria', 'Miles', 'Grace', 'John', 'Delilah', 'Jaxon', 'Scarlett', 'Mason', 'Ruby', 'Dylan', 'Iris',
  'William', 'Eliana', 'Rowan', 'Kinsley', 'Lincoln', 'Ada', 'Anthony',
];

/** The members' part of the seed, for `money`'s project and members "1" … String(money.memberships). */
export async function seedMembers(database: Database, storage: Storage, money: MoneySeed, log: (l: string) => void): Promise<MembersSeed> {
  const started = Date.now();
  const db = database.db;
  const p = money.projectId;
  const step = async (what: string, statement: ReturnType<typeof sql>) => {
    await db.execute(statement);
    log(`${storage}: ${what} after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  };
  const names = `{${NAMES.slice(0, 100).join(',')}}`;
  await step(
    'users',
    sql`INSERT INTO users (project_id, user_id, first_name, username, first_seen, last_seen)
      SELECT m.project_id, m.user_id, CASE WHEN g % 10 <> 0 THEN (${names}::text[])[1 + (g / 10) % 100] END,
             CASE WHEN g % 3 <> 0 THEN 'member_' || to_hex(g * 7919) END, m.created_at, m.created_at
      FROM memberships m, LATERAL (SELECT m.user_id::bigint AS g) x WHERE m.project_id = ${p}`,
  );
  // The subscriptions' columns only: the analytics trigger books start and end dates, which stay.
  await db.execute(sql.raw('ALTER TABLE memberships DISABLE TRIGGER tenure_analytics_memberships_upd'));
  await step(
    'subscriptions',
    sql`UPDATE memberships m SET subscription_id = 'sub_' || m.user_id,
        subscription_status = CASE WHEN g % 100 = 0 THEN 'past_due' WHEN g % 50 = 5 THEN 'trialing' ELSE 'active' END,
        subscription_cancel_at_period_end = g % 45 = 1,
        trial_ends_at = CASE WHEN g % 50 = 5 THEN m.end_date END
      FROM (SELECT m2.id, m2.user_id::bigint AS g FROM memberships m2 WHERE m2.project_id = ${p}) x
      WHERE m.id = x.id AND x.g % 5 < 2`,
  );
  await db.execute(sql.raw('ALTER TABLE memberships ENABLE TRIGGER tenure_analytics_memberships_upd'));
  const targets = rowsOf<{ id: string; platform: string; kind: string; external_id: string }>(
    await db.execute(sql`
      INSERT INTO targets (project_id, name, platform, kind, external_id)
      VALUES (${p}, 'VIP role', 'discord', 'role', '900000000000000001'), (${p}, 'Members chat', 'telegram', 'group', '-1001000000001')
      RETURNING id, platform, kind, external_id`),
  );
  const [role, chat] = targets;
  await step(
    'access',
    sql`INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, guild_id, on_expiry, desired, applied, state, synced_at)
      SELECT ${p}, t.id, m.user_id, t.platform, t.kind, t.external_id, CASE WHEN t.kind = 'role' THEN '900000000000000000' END,
             CASE WHEN t.kind = 'role' THEN 'remove_role' ELSE 'kick' END, d.desired,
             CASE WHEN s.state = 'synced' THEN d.desired END, s.state, CASE WHEN s.state = 'synced' THEN m.created_at END
      FROM memberships m
      CROSS JOIN LATERAL (SELECT m.user_id::bigint AS g) x
      JOIN targets t ON t.id = CASE WHEN x.g % 2 = 0 THEN ${role!.id}::uuid ELSE ${chat!.id}::uuid END
      CROSS JOIN LATERAL (SELECT CASE WHEN m.end_date > now() THEN 'granted' ELSE 'revoked' END AS desired) d
      CROSS JOIN LATERAL (SELECT CASE WHEN x.g % 200 = 3 THEN 'failed' WHEN x.g % 53 = 7 AND d.desired = 'granted' THEN 'waiting_for_member' ELSE 'synced' END AS state) s
      WHERE m.project_id = ${p}`,
  );
  await step('bans', sql`INSERT INTO bans (project_id, user_id, banned_by, reason) SELECT ${p}, user_id, 'dashboard:owner', 'bench' FROM memberships WHERE project_id = ${p} AND user_id::bigint % 1000 = 999`);
  await step(
    'unreachable members',
    sql`INSERT INTO unreachable_members (project_id, user_id, platform, reason) SELECT ${p}, user_id, 'telegram', 'bot_blocked' FROM memberships WHERE project_id = ${p} AND user_id::bigint % 100 = 3`,
  );
  // The whale: access on the other target too, messages, and payments beyond the seed's ten or so.
  await db.execute(sql`
    INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, applied, state)
    VALUES (${p}, ${chat!.id}, ${WHALE}, 'telegram', 'group', ${chat!.external_id}, 'kick', 'granted', NULL, 'failed')
    ON CONFLICT DO NOTHING`);
  await db.execute(sql`
    INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform, state, created_at, sent_at)
    SELECT ${p}, m.user_id, m.id, 'confirmation', 'payment:whale_' || g, 'discord', 'sent', now() - make_interval(days => g), now() - make_interval(days => g)
    FROM memberships m, generate_series(1, ${WHALE_MESSAGES}::int) AS g WHERE m.project_id = ${p} AND m.user_id = ${WHALE}`);
  await step(
    'the whale',
    sql`INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, subscription_id, created_at, updated_at)
      SELECT ${p}, 'stripe', 'in_whale_' || g, ${WHALE}, ${money.planIds[0]!}, 500, 'USD', 'succeeded', 'sub_whale', now() - make_interval(hours => g * 5), now() - make_interval(hours => g * 5)
      FROM generate_series(1, ${WHALE_PAYMENTS}::int) AS g`,
  );
  // As autovacuum would have by the time a project is this size: the update's dead rows gone, the visibility map set.
  for (const table of ['memberships', 'users', 'access', 'payments', 'bans', 'unreachable_members', 'notifications']) await db.execute(sql.raw(`VACUUM ANALYZE ${table}`));
  const whalePayments = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM payments WHERE project_id = ${p} AND user_id = ${WHALE}`))[0]!.n;
  log(`${storage}: the members' part seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { whale: WHALE, whalePayments, commonName: NAMES[7]! };
}
