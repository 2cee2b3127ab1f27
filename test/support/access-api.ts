import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { PlanView } from '../../src/domain/plans/plan.view.js';
import type { TargetView } from '../../src/domain/targets/target.view.js';
import { createMembership } from './api.js';
import { createPlan, createTarget, grant } from './catalogue.js';
import type { Harness, Tenant } from './harness.js';

/**
 * A project whose members hold access rows, for the access API's tests: a Discord bot connected
 * (an integration row inserted as the connection route writes it), a guild and a role in it granted by
 * a plan, `members` members on the plan, and the planner run as the worker runtime would run it.
 */
export interface AccessProject {
  guild: TargetView;
  role: TargetView;
  plan: PlanView;
  /** The members' user ids, in creation order. */
  users: string[];
}

export async function accessProject(h: Harness, t: Tenant, members: number): Promise<AccessProject> {
  // A dummy sealed token: nothing here calls Discord. Kept when the project already has one (a
  // shared-behaviour row prepares its request several times in one project).
  await h.database.db.execute(sql`
    INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name)
    VALUES (${t.projectId}, 'discord', 'v1.dummy.sealed', ${String(randomInt(1, 2 ** 47))}, 'tenure-test-bot')
    ON CONFLICT DO NOTHING`);
  const guild = await createTarget(t, { kind: 'guild', target_name: 'Server' });
  const role = await createTarget(t, { kind: 'role', parent_target_id: guild.target_id });
  const plan = await createPlan(t);
  await grant(t, plan.plan_id, role.target_id);
  const users: string[] = [];
  for (let i = 0; i < members; i++) users.push((await createMembership(t, { planId: plan.plan_id })).user_id);
  await h.container.stores.accessPlan.planProject(t.projectId);
  return { guild, role, plan, users };
}

/** `GET /access` with a query, expecting 200; returns the envelope's total and rows. */
export async function listAccess(t: Tenant, query = ''): Promise<{ total: number; data: Record<string, unknown>[] }> {
  const res = await t.request({ method: 'GET', url: `${t.base}/access${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
