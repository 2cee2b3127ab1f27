import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { TEST_NODE_FLAGS } from './test/support/processes.js';
import { LongestFirstSequencer } from './test/support/sequencer.js';

/**
 * The suite in tiers, each behaviour proven once at the lowest tier that can (run one alone with
 * `npm run test:<tier>`):
 * - unit: pure code beside it in src/, no storage, seconds;
 * - http: HTTP behaviour through the real app, on one storage (PostgreSQL when DATABASE_URL is
 *   set, else embedded PGlite), once;
 * - storage: the store and what differs by storage (migrations, locks, SKIP LOCKED,
 *   LISTEN/NOTIFY, concurrency, crash recovery), on PGlite and, when DATABASE_URL is set, on
 *   PostgreSQL too;
 * - cluster: several real server processes sharing PostgreSQL and Redis (DATABASE_URL and REDIS_URL).
 * `npm test` runs every tier whose services are configured.
 */

const pglite = { env: { TENURE_TEST_STORAGE: 'pglite' }, globalSetup: ['test/support/pglite.global-setup.ts'] };
const postgres = { env: { TENURE_TEST_STORAGE: 'postgres' }, globalSetup: ['test/support/postgres.global-setup.ts'] };
// The http tier runs on one storage: PostgreSQL when DATABASE_URL is set (as in CI: the same files
// took about 30% less CPU there than on PGlite, whose queries run as WebAssembly inside the test
// process), else embedded PGlite. Its files that are about embedded storage itself (DATA_DIR, the
// generated encryption key, a never-migrated database) open a PGlite of their own on either, from
// the PGlite seed, so both setups run.
const httpStorage = process.env.DATABASE_URL
  ? { env: postgres.env, globalSetup: [...pglite.globalSetup, ...postgres.globalSetup] }
  : pglite;
// Cluster files drive real server processes: each gets fresh modules (in a reused process; see
// `poolOptions` below). Storage files share a worker's modules and its pool of PGlite instances
// as http files do (measured on the PGlite storage tier: 245 CPU-seconds against 330 with fresh
// modules per file); each still makes its own harness and database.
const fresh = { poolOptions: { forks: { isolate: true } } };

const HTTP_DIRS = ['test/http', 'test/openapi', 'test/ops', 'test/cli', 'test/live', 'test/webhooks', 'test/access', 'test/fake-telegram', 'test/payments', 'clients/typescript/test'];
const httpFiles = HTTP_DIRS.flatMap((dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.join(dir, f)),
);
// HTTP files share modules within a worker, so a file that mocks a module must load the app
// afresh: such files run in a project of their own (none does today: suites that cover every route
// read the routes from the app's OpenAPI document, test/support/routes.ts).
const mocking = httpFiles.filter((f) => /\bvi\.mock\(/.test(readFileSync(f, 'utf8')));

const projects: TestProjectInlineConfiguration[] = [
  { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
  // The typed client's tests run against a real tenure server too.
  { extends: true, test: { name: 'http', include: httpFiles.filter((f) => !mocking.includes(f)), ...httpStorage } },
  { extends: true, test: { name: 'storage-pglite', include: ['test/storage/**/*.test.ts'], ...pglite } },
];
if (mocking.length > 0) projects.push({ extends: true, test: { name: 'http-mocking', include: mocking, ...httpStorage, ...fresh } });

if (process.env.DATABASE_URL) {
  projects.push({ extends: true, test: { name: 'storage-postgres', include: ['test/storage/**/*.test.ts'], ...postgres } });
}

// Cluster tests start real server processes sharing PostgreSQL and Redis; they need both URLs.
if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  projects.push({ extends: true, test: { name: 'cluster', include: ['test/cluster/**/*.test.ts'], ...postgres, ...fresh } });
}

export default defineConfig({
  test: {
    // No include here: project arrays are merged with the root's, so each project names its own.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default on a 2-core machine is one worker; much of the suite waits on PostgreSQL,
    // Redis and child processes, so three files at a time overlap those waits.
    maxWorkers: 3,
    // As many as maxWorkers, never fewer: with fewer, tinypool (1.1) retires a worker that falls
    // idle at the end of a project, and the idle timer fires again when that worker's teardown
    // answers, so it is torn down twice; the second teardown is cut by the first's kill, the
    // rejection ("Terminating worker thread") aborts the run, and the other forks are left
    // orphaned, spinning on an IPC channel that is gone. Equal counts never start that timer.
    // (Fewer workers from the command line: `--maxWorkers=1 --minWorkers=1`.)
    minWorkers: 3,
    // A fresh process per file cost more than most files' tests (Node starting, the app's modules
    // and PGlite loading again): the workers live on from file to file, one project after another.
    // Every file makes its own harness and database; in unit and http files modules are shared
    // too (vi.mock still applies per file).
    // TEST_NODE_FLAGS (test/support/processes.ts): V8 compiles PGlite's WebAssembly once, with its
    // baseline compiler, as in the product processes tests start.
    poolOptions: { forks: { isolate: false, execArgv: [...TEST_NODE_FLAGS] } },
    // Longest files first (test/support/sequencer.ts), so no project ends on one long file alone.
    sequence: { sequencer: LongestFirstSequencer },
    projects,
  },
});
