import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createPlan } from '../support/catalogue.js';
import { expectError } from '../support/api.js';
import { future, useHarness, userId, type Harness, type Tenant } from '../support/harness.js';

/**
 * Cursor pages (docs/idempotency-and-lists.md, "Cursor pages") on the memberships and payments
 * lists: `cursor=` then each `next_cursor` walks exactly what offset pages walk, in the same order,
 * for every sort and filter; no `total` on a cursor page; stable when rows are inserted between
 * pages; a malformed or foreign cursor is a 422 naming `cursor`; offset pages are as they were.
 */

type Item = Record<string, unknown>;

interface Page {
  data: Item[];
  total?: number;
  next_cursor?: string | null;
}

async function get(t: Tenant, url: string): Promise<Page> {
  const res = await t.request({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

const join = (list: string, query: string, paging: string) => `${list}?${[query, paging].filter(Boolean).join('&')}`;

/** Every page by offset, in order. */
async function byOffset(t: Tenant, list: string, query: string, limit: number): Promise<Item[]> {
  const items: Item[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await get(t, join(list, query, `limit=${limit}&offset=${offset}`));
    expect(page.total).toBeTypeOf('number');
    expect(page).not.toHaveProperty('next_cursor');
    items.push(...page.data);
    if (page.data.length < limit) return items;
  }
}

/** Every page by cursor, in order; each page checked for the cursor page's shape. */
async function byCursor(t: Tenant, list: string, query: string, limit: number): Promise<Item[]> {
  const items: Item[] = [];
  let cursor = '';
  for (let pages = 0; pages < 1000; pages++) {
    const page = await get(t, join(list, query, `limit=${limit}&cursor=${cursor}`));
    expect(page).not.toHaveProperty('total');
    expect(page).toHaveProperty('next_cursor');
    items.push(...page.data);
    if (page.next_cursor === null) return items;
    expect(page.data).toHaveLength(limit);
    cursor = page.next_cursor!;
  }
  throw new Error('the cursor never ended');
}

async function seedMemberships(h: Harness, t: Tenant): Promise<{ plan: string }> {
  const plan = (await createPlan(t)).plan_id;
  for (let i = 0; i < 9; i++) {
    const res = await t.request({
      method: 'POST',
      url: `${t.base}/memberships`,
      payload: { user_id: userId(), end_date: future(2 + (i % 4)).iso, ...(i % 2 ? { plan_id: plan } : {}) },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
  // Ties on every sort column, to the microsecond: the id decides between them.
  await h.database.db.execute(sql`
    UPDATE memberships SET created_at = '2026-01-01T00:00:00.123456Z'
    WHERE id IN (SELECT id FROM memberships WHERE project_id = ${t.projectId} ORDER BY id LIMIT 4)`);
  return { plan };
}

describe('cursor pages: GET /memberships', () => {
  const h = useHarness();

  it('walk exactly what offset pages walk, in the same order, for every sort and filter; no total, next_cursor null at the end', async () => {
    const t = await h.tenant();
    const { plan } = await seedMemberships(h, t);
    const list = `${t.base}/memberships`;
    const queries = ['', 'sort=created_at', 'sort=end_date', 'sort=-end_date', 'sort=-created_at', `plan_id=${plan}&sort=end_date`, 'status=active&sort=-end_date', `ends_before=${future(4).iso}`];
    for (const query of queries) {
      for (const limit of [1, 2, 4, 100]) {
        const offset = await byOffset(t, list, query, limit);
        expect(await byCursor(t, list, query, limit), `${query} limit ${limit}`).toStrictEqual(offset);
      }
    }
    expect(await byCursor(t, list, '', 100)).toHaveLength(9);
    expect(await byCursor(t, list, `plan_id=${plan}`, 100)).toHaveLength(4);
    // An empty list: one page, no rows, no next.
    const none = await get(t, `${list}?user_id=1&cursor=`);
    expect([none.data, none.next_cursor]).toStrictEqual([[], null]);
  });

  it('are stable when memberships are added between pages: nothing repeats, nothing is skipped', async () => {
    const t = await h.tenant();
    await seedMemberships(h, t);
    const list = `${t.base}/memberships`;
    for (const sort of ['-created_at', 'created_at']) {
      const before = await byOffset(t, list, `sort=${sort}`, 100);
      const first = await get(t, `${list}?sort=${sort}&limit=4&cursor=`);
      // New members, newest of all: before the first page newest first, after everything oldest first.
      for (let i = 0; i < 3; i++) {
        const res = await t.request({ method: 'POST', url: list, payload: { user_id: userId(), end_date: future(3).iso } });
        expect(res.statusCode, res.body).toBe(201);
      }
      const rest = await byCursorFrom(t, `${list}?sort=${sort}&limit=4`, first.next_cursor!);
      const seen = [...first.data, ...rest].map((m) => m.membership_id);
      expect(new Set(seen).size).toBe(seen.length);
      const old = before.map((m) => m.membership_id);
      expect(seen.filter((id) => old.includes(id))).toStrictEqual(old);
      expect(seen.length - old.length).toBe(sort === 'created_at' ? 3 : 0);
    }
  });

  it('a malformed or foreign cursor is a 422 naming cursor; offset with a cursor is a 422 naming offset', async () => {
    const t = await h.tenant();
    await seedMemberships(h, t);
    const path = `${t.base}/memberships`;
    const cursor = (await get(t, `${path}?sort=end_date&limit=2&cursor=`)).next_cursor!;
    const other = await h.tenant();
    const payments = (await get(t, `${t.base}/payments?cursor=`)).next_cursor;
    expect(payments).toBeNull();
    const forged = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { s: string; a: string; i: string };
    const malformed = [
      'not a cursor!',
      'abc',
      forged({ s: key.s, a: 'yesterday', i: key.i }),
      forged({ s: key.s, a: key.a, i: '1; DROP TABLE memberships' }),
      forged({ s: key.s, a: `${key.a}' OR '1'='1`, i: key.i }),
      forged([1, 2]),
      cursor.slice(0, -3),
    ];
    for (const bad of malformed) {
      expectError(await t.request({ method: 'GET', url: `${path}?sort=end_date&cursor=${encodeURIComponent(bad)}` }), {
        status: 422, code: 'VALIDATION_ERROR', method: 'GET', path,
        message: expect.stringMatching(/^cursor /),
      });
    }
    // The same cursor with another sort or filter, from another project, or on another list.
    const foreign: [Tenant, string][] = [
      [t, `${path}?sort=-end_date&cursor=${cursor}`],
      [t, `${path}?sort=end_date&status=active&cursor=${cursor}`],
      [t, `${t.base}/payments?cursor=${cursor}`],
      [other, `${other.base}/memberships?sort=end_date&cursor=${cursor}`],
    ];
    for (const [tenant, url] of foreign) {
      expectError(await tenant.request({ method: 'GET', url }), {
        status: 422, code: 'VALIDATION_ERROR', method: 'GET', path: url.split('?')[0]!,
        message: 'cursor belongs to another list, project, filter or sort: page with the filters and sort it came with',
      });
    }
    expectError(await t.request({ method: 'GET', url: `${path}?cursor=&offset=20` }), {
      status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'offset cannot be combined with cursor: page by one or the other',
    });
    expectError(await t.request({ method: 'GET', url: `${path}?cursor=${'a'.repeat(201)}` }), {
      status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'cursor must be the next_cursor of the previous page (at most 200 characters)',
    });
    // The cursor still works where it belongs, and the limit may change between pages.
    expect((await get(t, `${path}?sort=end_date&limit=3&cursor=${cursor}`)).data).toHaveLength(3);
  });
});

async function byCursorFrom(t: Tenant, url: string, cursor: string): Promise<Item[]> {
  const items: Item[] = [];
  for (let next: string | null = cursor; next !== null; ) {
    const page = await get(t, `${url}&cursor=${next}`);
    items.push(...page.data);
    next = page.next_cursor ?? null;
  }
  return items;
}

describe('cursor pages: GET /payments', () => {
  const h = useHarness();

  it('walk what offset pages walk, newest first, with the filters; ties broken by id', async () => {
    const t = await h.tenant();
    const alice = userId();
    for (let i = 0; i < 7; i++) {
      await h.database.db.execute(sql`
        INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status, created_at, updated_at)
        VALUES (${t.projectId}, 'stripe', ${randomUUID()}, ${i % 2 ? alice : userId()}, ${100 + i}, 'USD', ${i % 3 ? 'succeeded' : 'refunded'},
                ${i < 3 ? '2026-01-01T00:00:00.000001Z' : `2026-01-0${i}T00:00:00.000Z`}, now())`);
    }
    const list = `${t.base}/payments`;
    for (const query of ['', `user_id=${alice}`, 'status=succeeded', 'created_after=2026-01-01T00:00:00.000Z']) {
      for (const limit of [1, 2, 3]) {
        expect(await byCursor(t, list, query, limit), `${query} limit ${limit}`).toStrictEqual(await byOffset(t, list, query, limit));
      }
    }
    expect(await byCursor(t, list, '', 2)).toHaveLength(7);
  });
});
