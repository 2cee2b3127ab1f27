/**
 * The access planner's SQL on a large project (PostgreSQL), a quick measurement rather than a
 * benchmark of record: how long the planner takes to turn one `membership.bulk-extended` event into
 * desired access for every member, range by range (src/store/access-plan.store.ts).
 *
 *   npx tsx bench/access-plan.ts
 *
 * Needs PostgreSQL at postgres://postgres@127.0.0.1:5432/test (BENCH_DATABASE_URL overrides), where
 * it creates its own database and drops it afterwards; BENCH_PLAN_STORAGE=pglite runs it on an
 * in-memory embedded database instead. BENCH_PLAN_MEMBERS (100,000) members on one plan granting
 * one Discord role; BENCH_PLAN_BATCH overrides the members per range.
 *
 * Phases, each timed: connect (every active member's first grant: inserts), expire (every member's
 * revoke, from one `membership.expired` event each: one statement per 1,000 events), bulk extend
 * (one event, every member granted again: the whole-project re-plan), and a re-plan that changes
 * nothing. The longest transaction is what one range (or batch of events) holds locks for.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { AccessPlanStore, PROJECT_BATCH } from '../src/store/access-plan.store.js';
import { openDatabase, rowsOf, type Db } from '../src/database/db.js';
import { adminQuery } from './lib/admin.js';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const members = Number(process.env.BENCH_PLAN_MEMBERS ?? 100_000);
const batch = Number(process.env.BENCH_PLAN_BATCH ?? PROJECT_BATCH);
const embedded = process.env.BENCH_PLAN_STORAGE === 'pglite';

const name = `tenure_plan_${randomBytes(4).toString('hex')}`;
if (!embedded) await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const database = await openDatabase(embedded ? { kind: 'pglite-memory' } : { kind: 'postgres', url: url.toString(), poolSize: 4 });
try {
  await database.migrate();
  const { db } = database;
  const clock = { now: () => new Date() };
  const project = await seed(db, members);

  // Ranges timed one by one: the store's ranges are what a transaction holds.
  const ranges: number[] = [];
  const timed = new AccessPlanStore(wrapTransactions(db, ranges), clock, { projectBatch: batch });
  const drain = async () => {
    ranges.length = 0;
    const start = performance.now();
    let changed = 0;
    for (;;) {
      const b = await timed.planBatch(1_000);
      changed += b.changed;
      if (b.events < 1_000) break;
    }
    return { ms: performance.now() - start, changed, longest: Math.max(0, ...ranges) };
  };
  const report = (phase: string, r: { ms: number; changed: number; longest: number }) =>
    console.log(
      `${phase.padEnd(34)} ${String(r.changed).padStart(9)} rows changed in ${(r.ms / 1000).toFixed(2).padStart(6)} s` +
        `  (${Math.round(r.changed / (r.ms / 1000)).toLocaleString('en-US')} rows/s; longest transaction ${Math.round(r.longest)} ms)`,
    );
  const version = rowsOf<{ v: string }>(await db.execute(sql`SELECT current_setting('server_version') AS v`))[0]!.v;
  console.log(`${embedded ? 'PGlite' : 'PostgreSQL'} ${version}, ${members.toLocaleString('en-US')} members, ranges of ${batch.toLocaleString('en-US')}`);

  await db.execute(sql`INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name)
    VALUES (${project}, 'discord', 'v1.dummy', '1', 'bench')`);
  const start = performance.now();
  ranges.length = 0;
  const connected = await timed.planProject(project);
  report('connect (planProject: first grants)', { ms: performance.now() - start, changed: connected, longest: Math.max(0, ...ranges) });

  // Everyone expires at one instant: an event per member, as the sweeper writes them (written here
  // in one INSERT: the sweeper's own speed is bench/expiry.ts's business), and the planner revokes.
  await db.execute(sql`UPDATE access SET applied = 'granted', state = 'synced' WHERE project_id = ${project}`);
  await db.execute(sql`UPDATE memberships SET end_date = now() - interval '1 second', status = 'expired' WHERE project_id = ${project}`);
  await db.execute(sql`INSERT INTO events (project_id, type, data)
    SELECT project_id, 'membership.expired', jsonb_build_object('membership', jsonb_build_object('user_id', user_id))
    FROM memberships WHERE project_id = ${project} ORDER BY end_date, id`);
  report('expiry (membership.expired × N)', await drain());

  // A bulk extend: the memberships set by the bulk job's own statements, then its one event.
  await db.execute(sql`UPDATE access SET applied = 'revoked', state = 'synced' WHERE project_id = ${project}`);
  await db.execute(sql`UPDATE memberships SET end_date = now() + interval '30 days', status = 'active' WHERE project_id = ${project}`);
  await db.execute(sql`INSERT INTO events (project_id, type, data)
    VALUES (${project}, 'membership.bulk-extended', jsonb_build_object('total', ${members}::int, 'new_end_date', '2031-01-01T00:00:00.000Z'))`);
  report('bulk extend (one event)', await drain());

  await db.execute(sql`INSERT INTO events (project_id, type, data)
    VALUES (${project}, 'membership.bulk-extended', jsonb_build_object('total', ${members}::int, 'new_end_date', '2031-01-01T00:00:00.000Z'))`);
  report('bulk extend again (nothing changes)', await drain());
} finally {
  await database.close();
  if (!embedded) await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** A project with `n` active members on a plan granting a role in a guild. */
async function seed(db: Db, n: number): Promise<string> {
  const [p] = rowsOf<{ id: string }>(await db.execute(sql`INSERT INTO projects (name) VALUES ('bench') RETURNING id`));
  const project = p!.id;
  const [g] = rowsOf<{ id: string }>(
    await db.execute(sql`INSERT INTO targets (project_id, name, platform, kind, external_id) VALUES (${project}, 'g', 'discord', 'guild', '1') RETURNING id`),
  );
  const [r] = rowsOf<{ id: string }>(
    await db.execute(sql`INSERT INTO targets (project_id, name, platform, kind, external_id, parent_target_id)
      VALUES (${project}, 'r', 'discord', 'role', '2', ${g!.id}) RETURNING id`),
  );
  const [plan] = rowsOf<{ id: string }>(
    await db.execute(sql`INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
      VALUES (${project}, 'Gold', '10', 'USD', '1 month', '$10.00') RETURNING id`),
  );
  await db.execute(sql`INSERT INTO plan_targets (plan_id, target_id) VALUES (${plan!.id}, ${r!.id})`);
  await db.execute(sql`INSERT INTO memberships (project_id, user_id, plan_id, end_date)
    SELECT ${project}, (100000000000000000 + g)::text, ${plan!.id}, now() + interval '10 days' FROM generate_series(1, ${n}) g`);
  // The seeding's own events are not the planner's to measure.
  await db.execute(sql`DELETE FROM event_plan_queue`);
  await db.execute(sql`ANALYZE`);
  return project;
}

/** `db` whose transactions record their duration in `into`. */
function wrapTransactions(db: Db, into: number[]): Db {
  const wrapped = Object.create(db) as Db;
  wrapped.transaction = (async (work: Parameters<Db['transaction']>[0]) => {
    const start = performance.now();
    try {
      return await db.transaction(work);
    } finally {
      into.push(performance.now() - start);
    }
  }) as Db['transaction'];
  return wrapped;
}
