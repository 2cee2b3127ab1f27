import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { accessProject } from '../support/access-api.js';
import { createMembership, createWebhook, expectError } from '../support/api.js';
import { planBody, targetBody } from '../support/catalogue.js';
import { createCoupon } from '../support/coupons.js';
import { future, useHarness, userId, type Harness, type Tenant } from '../support/harness.js';
import { MALFORMED_PAGING } from '../support/paging.js';
import { checkout, connectStripe, deliverAll } from '../support/payments.js';
import { projectRoutes } from '../support/routes.js';


/**
 * The list conventions (docs/idempotency-and-lists.md), checked the same way on
 * every list route: `total`, newest first, a stable order when creation times tie, pages that
 * join up with no duplicate and no gap, and a 422 for a malformed `limit` or `offset`.
 */

interface Seeded {
  /** The list URL (it may carry a query of its own, e.g. `search`). */
  url: string;
  /** The listed items' ids, in creation order (oldest first). */
  ids: string[];
}

interface ListCase {
  name: string;
  seed(h: Harness, t: Tenant, n: number): Promise<Seeded>;
  /** The listed array in a success body. */
  items(body: { data: unknown }): Record<string, unknown>[];
  /** An item's id, as `ids` has it. */
  id: string;
  /** The table, creation-time column and id column the list orders by, for pinning times. */
  table: string;
  column: string;
  idColumn: string;
}

const dataArray = (body: { data: unknown }) => body.data as Record<string, unknown>[];

async function postOk(t: Tenant, url: string, payload: object): Promise<Record<string, unknown>> {
  const res = await t.request({ method: 'POST', url, payload });
  expect([200, 201], res.body).toContain(res.statusCode);
  return res.json().data;
}

/** Creates `n` members with names (so their users are recorded too); returns their user ids. */
async function seedMembers(t: Tenant, n: number, firstName: (i: number) => string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const user = userId();
    await postOk(t, `${t.base}/memberships`, { user_id: user, end_date: future(10).iso, user_name: { first_name: firstName(i) } });
    ids.push(user);
  }
  return ids;
}

const CASES: ListCase[] = [
  {
    name: 'GET /v2/projects/{project_id}/memberships',
    async seed(_h, t, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await createMembership(t)).membership_id);
      return { url: `${t.base}/memberships`, ids };
    },
    items: dataArray,
    id: 'membership_id',
    table: 'memberships',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/integrations/webhooks',
    async seed(_h, t, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await createWebhook(t, `https://hooks.example.com/${i}`)).id);
      return { url: `${t.base}/integrations/webhooks`, ids };
    },
    items: dataArray,
    id: 'id',
    table: 'webhooks',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/integrations/webhooks/{webhook_id}/deliveries',
    async seed(h, t, n) {
      const hook = await createWebhook(t);
      // Each membership's event fans out to the webhook as one delivery.
      for (let i = 0; i < n; i++) await createMembership(t);
      const rows = rowsOf<{ id: string }>(
        await h.database.db.execute(sql`
          SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.webhook_id = ${hook.id} ORDER BY e.seq`),
      );
      return { url: `${t.base}/integrations/webhooks/${hook.id}/deliveries`, ids: rows.map((r) => r.id) };
    },
    items: dataArray,
    id: 'id',
    table: 'webhook_deliveries',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/integrations/api-keys',
    async seed(_h, t, n) {
      // The tenant's own key is the oldest.
      const ids = [t.keyId];
      for (let i = 1; i < n; i++) {
        ids.push(((await postOk(t, `${t.base}/integrations/api-keys`, { label: `key ${i}` })).metadata as { id: string }).id);
      }
      return { url: `${t.base}/integrations/api-keys`, ids };
    },
    items: (body) => (body.data as { keys: Record<string, unknown>[] }).keys,
    id: 'id',
    table: 'api_keys',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/plans',
    async seed(_h, t, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await postOk(t, `${t.base}/plans`, planBody({ plan_name: `Plan ${i}` }))).plan_id as string);
      return { url: `${t.base}/plans`, ids };
    },
    items: dataArray,
    id: 'plan_id',
    table: 'plans',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/targets',
    async seed(_h, t, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await postOk(t, `${t.base}/targets`, targetBody({ target_name: `Target ${i}` }))).target_id as string);
      return { url: `${t.base}/targets`, ids };
    },
    items: dataArray,
    id: 'target_id',
    table: 'targets',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/access',
    async seed(h, t, n) {
      // One role, n members: the rows differ by user_id alone.
      const { users } = await accessProject(h, t, n);
      return { url: `${t.base}/access`, ids: users };
    },
    items: dataArray,
    id: 'user_id',
    table: 'access',
    column: 'created_at',
    idColumn: 'user_id',
  },
  {
    name: 'GET /v2/projects/{project_id}/users',
    async seed(_h, t, n) {
      return { url: `${t.base}/users`, ids: await seedMembers(t, n, (i) => `User ${i}`) };
    },
    items: dataArray,
    id: 'user_id',
    table: 'users',
    column: 'first_seen',
    idColumn: 'user_id',
  },
  {
    name: 'GET /v2/projects/{project_id}/users/search',
    async seed(_h, t, n) {
      // Users that do not match are interleaved: `total` counts matches only.
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        ids.push(...(await seedMembers(t, 1, () => `Zebra ${i}`)));
        await seedMembers(t, 1, () => `Other ${i}`);
      }
      return { url: `${t.base}/users/search?search=zebra`, ids };
    },
    items: dataArray,
    id: 'user_id',
    table: 'users',
    column: 'first_seen',
    idColumn: 'user_id',
  },
  {
    name: 'GET /v2/projects/{project_id}/users/{user_id}/notifications',
    async seed(h, t, n) {
      // One member's messages: n confirmations of their membership (no bot here, so no welcome of its own).
      const m = await createMembership(t, {});
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const [row] = rowsOf<{ id: string }>(
          await h.database.db.execute(sql`
            INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform)
            SELECT project_id, user_id, id, 'confirmation', ${`list-${i}`}, 'discord' FROM memberships
            WHERE project_id = ${t.projectId} AND user_id = ${m.user_id} RETURNING id`),
        );
        ids.push(row!.id);
      }
      return { url: `${t.base}/users/${m.user_id}/notifications`, ids };
    },
    items: dataArray,
    id: 'notification_id',
    table: 'notifications',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/payments',
    async seed(h, t, n) {
      const stripe = await connectStripe(h, t);
      const plan = (await postOk(t, `${t.base}/plans`, planBody({ plan_price: '3' }))) as { plan_id: string };
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const session = await checkout(t, plan.plan_id, userId());
        await deliverAll(h, stripe, h.stripe.world.pay(session.session_id));
        const [row] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM payments WHERE checkout_session_id = ${session.session_id}`));
        ids.push(row!.id);
      }
      return { url: `${t.base}/payments`, ids };
    },
    items: dataArray,
    id: 'payment_id',
    table: 'payments',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/coupons',
    async seed(_h, t, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await createCoupon(t)).coupon_id);
      return { url: `${t.base}/coupons`, ids };
    },
    items: dataArray,
    id: 'coupon_id',
    table: 'coupons',
    column: 'created_at',
    idColumn: 'id',
  },
  {
    name: 'GET /v2/projects/{project_id}/admins',
    async seed(_h, t, n) {
      const ids = await seedMembers(t, n, (i) => `Admin ${i}`);
      for (const user of ids) await postOk(t, `${t.base}/admins`, { user_id: user, permissions: ['memberships:read'] });
      return { url: `${t.base}/admins`, ids };
    },
    items: dataArray,
    id: 'user_id',
    table: 'admins',
    column: 'created_at',
    idColumn: 'user_id',
  },
];

const withQuery = (url: string, query: string) => `${url}${url.includes('?') ? '&' : '?'}${query}`;

const h = useHarness();

it('covers every list route the app registers (a GET whose query takes limit and offset)', () => {
  const paged = projectRoutes(h.app)
    .filter((r) => r.method === 'GET')
    .filter((r) => r.query.includes('limit') && r.query.includes('offset'))
    .map((r) => `GET ${r.url.replace(/:([a-z_]+)/g, '{$1}')}`);
  expect(paged.sort()).toStrictEqual(CASES.map((c) => c.name).sort());
});

describe.each(CASES.map((c) => [c.name, c] as const))('%s: list conventions', (_name, c) => {
  /** Sets the creation time of each of `ids` to `minutesAgo(i)` minutes before now (to the second). */
  async function pin(t: Tenant, ids: readonly string[], minutesAgo: (i: number) => number) {
    for (const [i, id] of ids.entries()) {
      await h.database.db.execute(sql`
        UPDATE ${sql.identifier(c.table)} SET ${sql.identifier(c.column)} = date_trunc('second', now()) - make_interval(mins => ${minutesAgo(i)})
        WHERE project_id = ${t.projectId} AND ${sql.identifier(c.idColumn)} = ${id}`);
    }
  }

  async function page(t: Tenant, url: string, query: string) {
    const res = await t.request({ method: 'GET', url: withQuery(url, query) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    return { total: body.total as number, ids: c.items(body).map((item) => item[c.id] as string) };
  }

  /** Every page of `size`, joined. */
  async function allPages(t: Tenant, url: string, size: number, expectedTotal: number): Promise<string[]> {
    const joined: string[] = [];
    for (let offset = 0; ; offset += size) {
      const p = await page(t, url, `limit=${size}&offset=${offset}`);
      expect(p.total).toBe(expectedTotal);
      expect(p.ids.length).toBeLessThanOrEqual(size);
      joined.push(...p.ids);
      if (p.ids.length < size) break;
    }
    return joined;
  }

  const N = 7;

  it('lists newest first with total; pages of 3 join up with no duplicate and no gap', async () => {
    const t = await h.tenant();
    const seeded = await c.seed(h, t, N);
    expect(seeded.ids).toHaveLength(N);
    await pin(t, seeded.ids, (i) => N - i);
    const newestFirst = [...seeded.ids].reverse();

    expect(await page(t, seeded.url, 'limit=100')).toStrictEqual({ total: N, ids: newestFirst });
    expect(await allPages(t, seeded.url, 3, N)).toStrictEqual(newestFirst);
    expect(await page(t, seeded.url, `limit=3&offset=${N}`)).toStrictEqual({ total: N, ids: [] });
  });

  it('keeps a stable order when creation times tie: pages of 2 cover every item exactly once', async () => {
    const t = await h.tenant();
    const seeded = await c.seed(h, t, N);
    await pin(t, seeded.ids, () => 5);
    const full = await page(t, seeded.url, 'limit=100');
    expect(full.total).toBe(N);
    expect([...full.ids].sort()).toStrictEqual([...seeded.ids].sort());
    expect(await allPages(t, seeded.url, 2, N)).toStrictEqual(full.ids);
    expect((await page(t, seeded.url, 'limit=100')).ids).toStrictEqual(full.ids);
  });

  it.each(MALFORMED_PAGING)('answers 422 for ?%s', async (query, message) => {
    const t = await h.tenant();
    const seeded = await c.seed(h, t, 1);
    const url = withQuery(seeded.url, query);
    const res = await t.request({ method: 'GET', url });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path: url.split('?')[0]!, message });
  });
});
