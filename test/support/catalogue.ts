import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { PlanView } from '../../src/domain/plans/plan.view.js';
import type { TargetView } from '../../src/domain/targets/target.view.js';
import { rowsOf } from '../../src/database/db.js';
import type { Harness, Tenant } from './harness.js';

/** Seeding plans and targets through the API, for the plan and target suites. */

/** A random Discord-style snowflake (18 digits). */
export const snowflake = (): string => String(100_000_000_000_000_000n + BigInt(randomInt(0, 2 ** 47)) * 1000n + BigInt(randomInt(0, 1000)));

export const planBody = (overrides: Record<string, unknown> = {}) => ({
  plan_name: 'Gold',
  plan_price: '10.00',
  plan_currency: 'USD',
  plan_duration: '1 month',
  plan_price_formatted: '$10.00',
  ...overrides,
});

export const targetBody = (overrides: Record<string, unknown> = {}) => ({
  target_name: 'VIP role',
  platform: 'discord',
  kind: 'role',
  external_id: snowflake(),
  ...overrides,
});

export async function createPlan(t: Tenant, overrides: Record<string, unknown> = {}): Promise<PlanView> {
  const res = await t.request({ method: 'POST', url: `${t.base}/plans`, payload: planBody(overrides) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function createTarget(t: Tenant, overrides: Record<string, unknown> = {}): Promise<TargetView> {
  const res = await t.request({ method: 'POST', url: `${t.base}/targets`, payload: targetBody(overrides) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** Makes `planId` grant `targetId` and returns the plan. */
export async function grant(t: Tenant, planId: string, targetId: string): Promise<PlanView> {
  const res = await t.request({ method: 'POST', url: `${t.base}/plans/${planId}/targets/${targetId}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export async function getTarget(t: Tenant, targetId: string): Promise<TargetView> {
  const res = await t.request({ method: 'GET', url: `${t.base}/targets/${targetId}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data[0];
}

export async function getPlan(t: Tenant, planId: string): Promise<PlanView> {
  const res = await t.request({ method: 'GET', url: `${t.base}/plans/${planId}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/**
 * Pins the creation times of `ids` (rows of `table`) one minute apart, the first oldest, so a
 * newest-first order does not hinge on two requests landing in different milliseconds.
 */
export async function spreadCreation(h: Harness, table: 'plans' | 'targets', ids: readonly string[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    await h.database.db.execute(
      sql`UPDATE ${sql.identifier(table)} SET created_at = now() - make_interval(mins => ${ids.length - i}) WHERE id = ${id}`,
    );
  }
}

/** The deleted_at of a plan row (the API hides deleted plans). */
export async function planDeletedAt(h: Harness, planId: string): Promise<string | null> {
  const [row] = rowsOf<{ deleted_at: string | null }>(await h.database.db.execute(sql`SELECT deleted_at::text FROM plans WHERE id = ${planId}`));
  return row!.deleted_at;
}
