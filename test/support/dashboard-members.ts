import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import type { Actor } from '../../src/domain/dashboard/actor.js';
import { createPlan, createTarget } from './catalogue.js';
import { future, userId, type Harness, type Tenant } from './harness.js';
import { ban } from './keys.js';

/**
 * A project whose members are each in one state the dashboard's members table tells apart
 * (docs/dashboard-members.md): the table's tests, its pages' tests and its browser walk share it.
 */

export type SeededName = 'ada' | 'bob' | 'trial' | 'grace' | 'cancelling' | 'expired' | 'banned' | 'failed' | 'unlinked';

export interface SeededMember {
  userId: string;
  membershipId: string;
  endDate: string;
}

export interface SeededProject {
  planA: string;
  planB: string;
  /** A Discord role target the access rows name. */
  targetId: string;
  m: Record<SeededName, SeededMember>;
}

/** The project's owner acting, or an admin with `permissions`. */
export function actorOf(t: Tenant, permissions: readonly string[] = ['all'], userIdOf: string | null = null): Actor {
  return { projectId: t.projectId, projectName: 'Test', sessionId: randomUUID(), userId: userIdOf, name: null, method: 'link', permissions };
}

async function member(t: Tenant, days: number, planId: string | null, name: { first_name?: string; username?: string } | null): Promise<SeededMember> {
  const payload = { user_id: userId(), end_date: future(days).iso, ...(planId ? { plan_id: planId } : {}), ...(name ? { user_name: name } : {}) };
  const res = await t.request({ method: 'POST', url: `${t.base}/memberships`, payload });
  expect(res.statusCode, res.body).toBe(201);
  const data = res.json().data as { user_id: string; membership_id: string; membership_end_date: string };
  return { userId: data.user_id, membershipId: data.membership_id, endDate: data.membership_end_date };
}

/**
 * Nine members, created one minute apart in this order (so `created` orders them so): two plain
 * active ones (Ada ending in 5 days, Bob in 3), one in a trial, one in grace (a failed renewal),
 * one cancelling, one expired, one banned, one whose access failed and one not linked (granted a
 * role, not in the guild yet, DMs closed).
 */
export async function seedMembers(h: Harness, t: Tenant): Promise<SeededProject> {
  const planA = (await createPlan(t, { plan_name: 'Gold' })).plan_id;
  const planB = (await createPlan(t, { plan_name: 'Silver' })).plan_id;
  const targetId = (await createTarget(t, { target_name: 'VIP role' })).target_id;
  const m: Record<SeededName, SeededMember> = {
    ada: await member(t, 5, planA, { first_name: 'Ada', username: 'lovelace' }),
    bob: await member(t, 3, planB, { first_name: 'bob', username: 'builder_50%' }),
    trial: await member(t, 20, planA, { username: 'tria' }),
    grace: await member(t, 9, planA, { first_name: 'Grace' }),
    cancelling: await member(t, 11, planA, { first_name: 'Cara' }),
    expired: await member(t, 15, planB, { first_name: 'Ezra' }),
    banned: await member(t, 30, planB, { first_name: 'Ben' }),
    failed: await member(t, 40, planA, { first_name: 'Faye' }),
    unlinked: await member(t, 50, planA, null),
  };
  const db = h.database.db;
  const set = (x: SeededMember, q: ReturnType<typeof sql>) => db.execute(sql`UPDATE memberships SET ${q} WHERE id = ${x.membershipId}`);
  await set(m.trial, sql`subscription_id = 'sub_trial', subscription_status = 'trialing', trial_ends_at = end_date`);
  await set(m.grace, sql`subscription_id = 'sub_grace', subscription_status = 'past_due'`);
  await set(m.cancelling, sql`subscription_id = 'sub_cancel', subscription_status = 'active', subscription_cancel_at_period_end = true`);
  await set(m.expired, sql`end_date = now() - interval '2 days', status = 'expired'`);
  m.expired.endDate = rowsOf<{ e: string }>(
    await db.execute(sql`SELECT to_char(end_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS e FROM memberships WHERE id = ${m.expired.membershipId}`),
  )[0]!.e;
  await ban(t, m.banned.userId, 'spam');
  const access = (x: SeededMember, state: string, error: string | null) =>
    db.execute(sql`INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, guild_id, on_expiry, desired, state, last_error)
      VALUES (${t.projectId}, ${targetId}, ${x.userId}, 'discord', 'role', '999000000000000001', '999000000000000000', 'remove_role', 'granted', ${state}, ${error}::jsonb)`);
  await access(m.ada, 'synced', null);
  await access(m.failed, 'failed', JSON.stringify({ code: '50013', message: 'Missing Permissions' }));
  await access(m.unlinked, 'waiting_for_member', null);
  await db.execute(sql`INSERT INTO unreachable_members (project_id, user_id, platform, reason) VALUES (${t.projectId}, ${m.unlinked.userId}, 'discord', 'dm_closed')`);
  const order = Object.values(m);
  for (const [i, x] of order.entries()) {
    await db.execute(sql`UPDATE memberships SET created_at = now() - make_interval(mins => ${order.length - i}) WHERE id = ${x.membershipId}`);
  }
  return { planA, planB, targetId, m };
}
