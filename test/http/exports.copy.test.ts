import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { rowsOf } from '../../src/database/db.js';
import { ExportsService, type ExportStatements } from '../../src/domain/exports/exports.service.js';
import { createPlan } from '../support/catalogue.js';
import { future, onPostgres, useHarness, userId, type Harness, type Tenant } from '../support/harness.js';

/**
 * How exports are written (docs/memberships.md, "Export"): on PostgreSQL the database writes the
 * file (COPY … TO STDOUT), elsewhere the server writes it from batches of rows. Both must give the
 * same bytes: each export here is compared with the batch writer's over the same rows, and counts
 * which path served it. Then: text JSON and CSV must escape (quotes, backslashes, line breaks,
 * control characters, the bytes the NDJSON COPY uses as its quote and delimiter, non-ASCII); a
 * client that goes away mid-way leaves no statement running and no connection held; exports past
 * the node's COPY slots are served in batches.
 */

/** Names that every writer must get right. \u0001 and \u0002 are the NDJSON COPY's quote and delimiter. */
const NASTY = [
  'back\\slash \\n not a newline',
  'say "hi", \\"escaped\\"',
  'two\nlines\r\nand\rreturn',
  'tab\there \u0001 one \u0002 two \u001f',
  'Zoë 🎉 日本 \u2028 sep',
  '\\.',
  '"',
  ',',
];

type Harnessed = { h: Harness; t: Tenant };

/** The app on the harness's container, its exports reading through `store`, listening on a port. */
async function appWith(h: Harness, store: ExportStatements) {
  const app = await buildApp({ ...h.container, services: { ...h.container.services, exports: new ExportsService(store, h.container.clock) } });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, address };
}

/** The real store, counting the exports the database wrote (COPY) and the batches read. */
function counting(h: Harness) {
  const store = h.container.stores.exports;
  const seen = { copies: 0, batches: 0 };
  const statements: ExportStatements = {
    memberships: (...a) => (seen.batches++, store.memberships(...a)),
    payments: (...a) => (seen.batches++, store.payments(...a)),
    copyMemberships: async (...a) => {
      const bytes = await store.copyMemberships(...a);
      if (bytes) seen.copies++;
      return bytes;
    },
    copyPayments: async (...a) => {
      const bytes = await store.copyPayments(...a);
      if (bytes) seen.copies++;
      return bytes;
    },
  };
  return { statements, seen };
}

/** The batch writer alone: the store without its COPY. */
const batchesOnly = (h: Harness): ExportStatements => {
  const store = h.container.stores.exports;
  return { memberships: (...a) => store.memberships(...a), payments: (...a) => store.payments(...a) };
};

async function seedNasty({ h, t }: Harnessed): Promise<void> {
  const plan = (await createPlan(t, { plan_name: 'Plan "\\x" ,\n two' })).plan_id;
  for (const [i, name] of NASTY.entries()) {
    const res = await t.request({
      method: 'POST',
      url: `${t.base}/memberships`,
      payload: { user_id: userId(), end_date: future(2 + i).iso, plan_id: i % 2 ? plan : null, user_name: { first_name: name, username: i % 3 ? `u\\${i}` : null } },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
  const first = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM memberships WHERE project_id = ${t.projectId} ORDER BY id LIMIT 2`));
  await h.database.db.execute(sql`UPDATE memberships SET subscription_id = 'sub_"q"', subscription_status = 'trialing', trial_ends_at = end_date WHERE id = ${first[0]!.id}`);
  await h.database.db.execute(sql`UPDATE memberships SET subscription_id = 'sub_\\', subscription_status = 'past_due' WHERE id = ${first[1]!.id}`);
  for (const [i, session] of ['cs_"1",\n', 'cs_\\2\u0001', null].entries()) {
    await h.database.db.execute(sql`
      INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status, checkout_session_id, created_at, updated_at)
      VALUES (${t.projectId}, 'stripe', ${`key_${i}`}, ${userId()}, ${1234 + i}, ${['EUR', 'JPY', 'KWD'][i]!}, 'succeeded', ${session}, now() - make_interval(secs => ${i}), now())`);
  }
}

async function body(address: string, t: Tenant, path: string): Promise<string> {
  const res = await fetch(`${address}${t.base}/${path}`, { headers: t.headers });
  expect(res.status).toBe(200);
  return res.text();
}

describe('exports: the database’s file and the batch writer’s are the same bytes', () => {
  const h = useHarness();
  const apps: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('memberships and payments, CSV and NDJSON, every sort, with text that needs escaping; NDJSON lines are the list serializer’s JSON', async () => {
    const t = await h.tenant();
    await seedNasty({ h, t });
    const { statements, seen } = counting(h);
    const served = await appWith(h, statements);
    const batches = await appWith(h, batchesOnly(h));
    apps.push(served.app, batches.app);
    const paths = [
      ...['-created_at', 'created_at', 'end_date', '-end_date'].flatMap((sort) => [
        `memberships/export?format=csv&sort=${sort}`,
        `memberships/export?format=ndjson&sort=${sort}`,
      ]),
      'memberships/export?format=ndjson&status=in_trial',
      'memberships/export?format=csv&status=in_grace',
      'payments/export?format=csv',
      'payments/export?format=ndjson',
    ];
    for (const path of paths) {
      const written = await body(served.address, t, path);
      expect(written, path).toBe(await body(batches.address, t, path));
      expect(written.length, path).toBeGreaterThan(0);
    }
    // On PostgreSQL the database wrote every one of them; elsewhere the batches did.
    expect(seen.copies).toBe(onPostgres ? paths.length : 0);
    expect(seen.batches).toBe(onPostgres ? 0 : paths.length);

    const lines = (await body(served.address, t, 'memberships/export?format=ndjson')).split('\n');
    expect(lines.pop()).toBe('');
    const list = (await t.request({ method: 'GET', url: `${t.base}/memberships?limit=100` })).json().data as Record<string, unknown>[];
    expect(lines.map((l) => JSON.parse(l))).toStrictEqual(list);
    for (const [i, line] of lines.entries()) {
      // Compact, escaped as JSON.stringify does, the keys in the list's order.
      expect(line).toBe(JSON.stringify(list[i]));
    }
    const names = lines.map((l) => (JSON.parse(l) as { user_name: { first_name: string } }).user_name.first_name);
    expect([...names].sort()).toStrictEqual([...NASTY].sort());
  });
});

/** Backends of the harness's database running a COPY to a client, other than this one. */
async function copiesRunning(h: Harness): Promise<number> {
  const result = await h.database.db.execute(sql`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'COPY (%'`);
  return rowsOf<{ n: number }>(result)[0]!.n;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('an export whose client goes away, and exports past the COPY slots', () => {
  const h = useHarness();

  it('a client that disconnects mid-way stops the export: no statement left running, the connection released', async () => {
    const t = await h.tenant();
    // Far more than the sockets' buffers hold, so the export is still running when the client stops
    // reading (fewer on PGlite, where inserting them takes longer: 20 batches).
    const rows = onPostgres ? 150_000 : 40_000;
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, end_date)
      SELECT ${t.projectId}::uuid, (100000000000000000 + i)::text, now() + make_interval(hours => 1 + i % 500) FROM generate_series(1, ${rows}::int) AS i`);
    const { statements, seen } = counting(h);
    const { app, address } = await appWith(h, statements);
    try {
      const abort = new AbortController();
      const res = await fetch(`${address}${t.base}/memberships/export?format=ndjson`, { headers: t.headers, signal: abort.signal });
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      // The client stops reading: the server stops too, and waits (backpressure) instead of finishing.
      await new Promise((r) => setTimeout(r, 500));
      if (onPostgres) {
        expect(await copiesRunning(h)).toBe(1);
        // A second export while the first holds this pool's one COPY slot (pool of 5): served in batches, complete.
        const second = await fetch(`${address}${t.base}/memberships/export?format=csv&user_id=100000000000000007`, { headers: t.headers });
        expect((await second.text()).split('\r\n')).toHaveLength(3);
        expect([seen.copies, seen.batches]).toStrictEqual([1, 1]);
      } else {
        expect(seen.batches).toBeLessThan(rows / 2_000);
      }
      const read = seen.batches;
      abort.abort();
      if (onPostgres) await until(async () => (await copiesRunning(h)) === 0, 'the COPY stopped');
      else {
        await new Promise((r) => setTimeout(r, 500));
        expect(seen.batches).toBe(read);
      }
      // The next export is whole, and on PostgreSQL the database's again: the slot and the connection are back.
      const again = await fetch(`${address}${t.base}/memberships/export?format=csv&user_id=100000000000000008`, { headers: t.headers });
      expect((await again.text()).split('\r\n')).toHaveLength(3);
      expect(seen.copies).toBe(onPostgres ? 2 : 0);
    } finally {
      await app.close();
    }
  }, 60_000);
});
