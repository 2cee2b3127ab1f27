/**
 * The portal page's statement (PortalLinksStore.pageOf) on embedded PGlite, seeded like
 * bench/web.ts (10,000 members with a payment each; the portal's member with 8 payments and
 * invoicing details): run as a named prepared statement (src/database/prepared.ts: PREPAREd once,
 * then EXECUTE) against the same statement unnamed (parsed and planned on every call, as a
 * statement inside a transaction runs), interleaved call by call so the host's load falls on both
 * alike, with an empty transaction timed too (what the unnamed path's BEGIN/COMMIT adds).
 *
 *   npx tsx bench/portal-statement.ts      # BENCH_PORTAL_CALLS (default 300)
 *
 * Prints one line; bench/RESULTS.md (the web section) quotes it.
 */
import { loadavg } from 'node:os';
import { openDatabase } from '../src/database/db.js';
import { PortalLinksStore } from '../src/store/portal-links.store.js';
import { seedShop } from './web.js';

const MEMBER = '400000000000000001';
const CALLS = Number(process.env.BENCH_PORTAL_CALLS ?? 300);

const database = await openDatabase({ kind: 'pglite-memory' });
await database.migrate();
const { projectId } = await seedShop(database);
const store = new PortalLinksStore(database.db);
const page = () => store.pageOf(projectId, MEMBER, new Date(), 20);
const pageInTransaction = () => database.db.transaction((tx) => new PortalLinksStore(tx).pageOf(projectId, MEMBER, new Date(), 20));

const times = { prepared: [] as number[], unnamed: [] as number[], empty: [] as number[] };
const timed = async (into: number[], run: () => Promise<unknown>) => {
  const t = performance.now();
  await run();
  into.push(performance.now() - t);
};
for (let i = 0; i < 30; i++) {
  await page();
  await pageInTransaction();
}
for (let i = 0; i < CALLS; i++) {
  await timed(times.prepared, page);
  await timed(times.unnamed, pageInTransaction);
  await timed(times.empty, () => database.db.transaction(async () => {}));
}
const at = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * p)]!;
const p50 = { prepared: at(times.prepared, 0.5), unnamed: at(times.unnamed, 0.5) - at(times.empty, 0.5) };
console.log(
  `${CALLS} calls each, load ${loadavg()[0]!.toFixed(1)}: prepared p50 ${p50.prepared.toFixed(2)} ms (p90 ${at(times.prepared, 0.9).toFixed(2)}); ` +
    `unnamed p50 ${p50.unnamed.toFixed(2)} ms without the transaction's ${at(times.empty, 0.5).toFixed(2)} ms (p90 ${at(times.unnamed, 0.9).toFixed(2)}); ` +
    `${(p50.unnamed / p50.prepared).toFixed(1)}× faster prepared`,
);
await database.close();
