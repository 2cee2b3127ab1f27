import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, createWebhook, expectError } from '../support/api.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { createHarness, type Harness, type Tenant } from '../support/harness.js';
import { concreteUrl, projectRoutes, type RecordedRoute } from '../support/routes.js';


/**
 * Cross-project access: a valid key of project B on any route of project A is a
 * 403 FORBIDDEN, for every route and method the app registers under /v2/projects/:project_id
 * (collected as the routes register, so a route added later is covered without listing it), and
 * nothing of A (or B) changes: every row of every table that belongs to a project is compared.
 */

/** Every row that belongs to the project, table by table, as JSON text in a stable order. */
async function everything(h: Harness, projectId: string): Promise<Record<string, string[]>> {
  const db = h.database.db;
  const tables = rowsOf<{ table_name: string }>(
    await db.execute(sql`
      SELECT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'project_id' ORDER BY table_name`),
  ).map((r) => r.table_name);
  expect(tables).toEqual(expect.arrayContaining(['memberships', 'webhooks', 'events', 'api_keys', 'plans', 'targets', 'idempotency_keys']));
  const snapshot: Record<string, string[]> = {};
  const rows = async (name: string, query: ReturnType<typeof sql>) =>
    (snapshot[name] = rowsOf<{ row: string }>(await db.execute(query)).map((r) => r.row));
  for (const table of tables) {
    await rows(table, sql`SELECT to_jsonb(x)::text AS row FROM ${sql.identifier(table)} x WHERE x.project_id = ${projectId} ORDER BY 1`);
  }
  // Tables that belong to a project through their parent row.
  await rows('projects', sql`SELECT to_jsonb(p)::text AS row FROM projects p WHERE p.id = ${projectId}`);
  await rows('plan_targets', sql`
    SELECT to_jsonb(pt)::text AS row FROM plan_targets pt JOIN plans p ON p.id = pt.plan_id WHERE p.project_id = ${projectId} ORDER BY 1`);
  await rows('webhook_delivery_attempts', sql`
    SELECT to_jsonb(a)::text AS row FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
    WHERE d.project_id = ${projectId} ORDER BY 1`);
  return snapshot;
}

describe('Cross-project access: a key of project B on every route of project A', () => {
  let h: Harness;
  let victim: Tenant;
  let attacker: Tenant;
  /** Real ids of A's resources, so that each request names something that exists. */
  let values: Record<string, string>;

  beforeAll(async () => {
    h = await createHarness();
    victim = await h.tenant();
    attacker = await h.tenant();
    const hook = await createWebhook(victim);
    const member = await createMembership(victim);
    const plan = await createPlan(victim);
    const target = await createTarget(victim);
    await grant(victim, plan.plan_id, target.target_id);
    const banned = await victim.request({ method: 'PUT', url: `${victim.base}/ban/${member.user_id}`, payload: { reason: 'test' } });
    expect(banned.statusCode, banned.body).toBe(200);
    const [delivery] = rowsOf<{ id: string }>(
      await h.database.db.execute(sql`SELECT id FROM webhook_deliveries WHERE webhook_id = ${hook.id} LIMIT 1`),
    );
    values = {
      membership_id: member.membership_id,
      user_id: member.user_id,
      webhook_id: hook.id,
      delivery_id: delivery!.id,
      key_id: victim.keyId,
      plan_id: plan.plan_id,
      target_id: target.target_id,
      key: 'timezone_preference',
    };
  });
  afterAll(() => h.close());

  const routes = (): RecordedRoute[] => projectRoutes(h.app);

  it('collects the routes as they register: every known resource is among them', () => {
    const urls = new Set(routes().map((r) => `${r.method} ${r.url}`));
    for (const known of [
      'POST /v2/projects/:project_id/memberships',
      'PATCH /v2/projects/:project_id/memberships/extend',
      'DELETE /v2/projects/:project_id/integrations/webhooks/:webhook_id',
      'GET /v2/projects/:project_id/integrations/api-keys',
      'GET /v2/projects/:project_id/plans',
      'PATCH /v2/projects/:project_id/targets',
      'PATCH /v2/projects/:project_id/settings',
      'GET /v2/projects/:project_id/users/search',
      'PUT /v2/projects/:project_id/ban/:user_id',
      'POST /v2/projects/:project_id/integrations/live-updates/tokens',
    ]) {
      expect(urls, known).toContain(known);
    }
  });

  it('answers 403 FORBIDDEN to every method of every route, and neither project changes', async () => {
    const victimBefore = await everything(h, victim.projectId);
    const attackerBefore = await everything(h, attacker.projectId);
    const answered: string[] = [];
    for (const route of routes()) {
      const url = concreteUrl(route, victim.projectId, values);
      const withBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
      const res = await h.app.inject({
        method: route.method as 'GET',
        url,
        headers: { ...attacker.headers, ...(route.method === 'POST' ? { 'idempotency-key': `cross-${route.url}` } : {}) },
        ...(withBody ? { payload: { url: 'https://hooks.example.com/x', label: 'x', value: 'x', extend: Date.now() + 86_400_000 } } : {}),
      });
      const what = `${route.method} ${route.url}`;
      if (route.method === 'HEAD') {
        expect(res.statusCode, what).toBe(403);
      } else {
        expectError(res, { status: 403, code: 'FORBIDDEN', method: route.method, path: url });
        expect(res.body, what).not.toContain(attacker.key);
      }
      answered.push(what);
    }
    expect(answered.length).toBe(routes().length);
    expect(await everything(h, victim.projectId)).toStrictEqual(victimBefore);
    expect(await everything(h, attacker.projectId)).toStrictEqual(attackerBefore);
  });

  it('the same requests with A’s own key are not refused (the control: the 403 is about the key, not the request)', async () => {
    for (const route of routes().filter((r) => r.method === 'GET')) {
      const url = concreteUrl(route, victim.projectId, values);
      const res = await victim.request({ method: 'GET', url: url.includes('/users/search') ? `${url}?search=abc` : url });
      expect(res.statusCode, `${route.url}: ${res.body}`).not.toBe(403);
      expect(res.statusCode, `${route.url}: ${res.body}`).toBeLessThan(500);
    }
  });
});
