import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../../src/database/db.js';
import { adminQuery } from './admin.js';
import { startServer, stopAll, type Server } from './processes.js';
import { writeSection } from './report.js';

/**
 * What the phases of bench/run.ts share: the temp directory (server logs, PGlite data
 * directories), the admin PostgreSQL URL, the log, and the clean-up list that run.ts works
 * through on exit, error and Ctrl-C.
 */
export interface BenchContext {
  tmp: string;
  adminUrl: string;
  /** LOG_LEVEL of the full server: `info`, as in production. */
  logLevel: string;
  log: (line: string) => void;
  /** Registers a clean-up step (dropping a database): run.ts runs them all at the end or on Ctrl-C. */
  onCleanup: (step: () => Promise<unknown>) => void;
}

/** A fresh PostgreSQL database `tenure_bench_<random>`, dropped at clean-up (or earlier by `drop`). */
export async function benchDatabase(ctx: BenchContext): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `tenure_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(ctx.adminUrl, `CREATE DATABASE "${name}"`);
  let dropped: Promise<void> | undefined;
  const drop = () => (dropped ??= adminQuery(ctx.adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined));
  ctx.onCleanup(() => drop().catch(() => undefined));
  const url = new URL(ctx.adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop };
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Copies an empty PGlite data directory (initdb done, nothing migrated) to `dir`. Creating one
 * runs PGlite's initdb, 5–20 s on this 2-core machine; opening a copy takes about a second. The
 * template is made once per PGlite version and kept in node_modules/.cache/tenure-bench/; it holds
 * no tenure schema, so a migration change cannot make it stale.
 */
async function emptyPgliteDir(dir: string): Promise<void> {
  const { version } = JSON.parse(await readFile(path.join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string };
  const template = path.join(root, 'node_modules/.cache/tenure-bench', `pglite-${version}`);
  if (!existsSync(template)) {
    const building = `${template}.${randomBytes(4).toString('hex')}`;
    await (await openDatabase({ kind: 'pglite', dataDir: building })).close();
    // Another bench may have made it meanwhile: keep theirs.
    await rename(building, template).catch(() => rm(building, { recursive: true, force: true }));
  }
  await cp(template, dir, { recursive: true });
}

/** A migrated PGlite data directory under the temp dir, seeded by `seed`, closed again. */
export async function pgliteDir<T>(ctx: BenchContext, name: string, seed: (database: Database) => Promise<T>): Promise<[string, T]> {
  const dir = path.join(ctx.tmp, name);
  if (!existsSync(dir)) await emptyPgliteDir(dir);
  const database = await openDatabase({ kind: 'pglite', dataDir: dir });
  try {
    await database.migrate();
    return [dir, await seed(database)];
  } finally {
    await database.close();
  }
}

/**
 * A migrated database of `storage` seeded by `seed`, closed again, and the environment a server
 * needs to open it: a bench database of its own with an encryption key on PostgreSQL (bot tokens
 * are sealed), a data directory on PGlite (its key is made beside it).
 */
export async function seededStorage<T>(
  ctx: BenchContext,
  storage: 'PostgreSQL' | 'PGlite',
  name: string,
  seed: (database: Database) => Promise<T>,
): Promise<{ env: Record<string, string>; seeded: T }> {
  if (storage === 'PGlite') {
    const [dir, seeded] = await pgliteDir(ctx, `${name}-${randomBytes(3).toString('hex')}`, seed);
    return { env: { DATA_DIR: dir }, seeded };
  }
  const { url } = await benchDatabase(ctx);
  const database = await openDatabase({ kind: 'postgres', url, poolSize: 2 });
  try {
    await database.migrate();
    const seeded = await seed(database);
    return { env: { DATABASE_URL: url, TENURE_ENCRYPTION_KEY: randomBytes(32).toString('base64') }, seeded };
  } finally {
    await database.close();
  }
}

/** A copy of a closed PGlite data directory: the same tenant and keys, for a second server. */
export async function copyPgliteDir(ctx: BenchContext, from: string, name: string): Promise<string> {
  const dir = path.join(ctx.tmp, name);
  await cp(from, dir, { recursive: true });
  return dir;
}

/**
 * How `npm start` starts the server (package.json's start script: `[launcher…] node [options]
 * dist/main.js`, today `sh scripts/with-memory-settings.sh node --v8-pool-size=1`: docs/memory.md),
 * as words without the entry, so the benches run the server as it is started. BENCH_NODE_ARGS
 * replaces them (`BENCH_NODE_ARGS=` for none), to measure one side by side.
 */
export function startWords(): string[] {
  if (process.env.BENCH_NODE_ARGS !== undefined) return process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean);
  const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/);
  if (!words.includes('node') || words.at(-1) !== 'dist/main.js') throw new Error(`package.json's start script is not "[launcher…] node [options] dist/main.js": ${scripts.start}`);
  return words.slice(0, -1);
}

/** A word that sets the environment (`MALLOC_MMAP_THRESHOLD_=32768`). */
const ENV_WORD = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * Start words split: the launcher (the command before `node` that execs it, if any), node's
 * options, and the environment that `NAME=value` words set.
 */
export function splitStartWords(words: readonly string[]): { launcher: string[]; options: string[]; env: Record<string, string> } {
  const node = words.indexOf('node');
  const rest = words.slice(node + 1);
  const env: Record<string, string> = {};
  for (const w of rest.filter((w) => ENV_WORD.test(w))) env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  return { launcher: node < 0 ? [] : words.slice(0, node), options: rest.filter((w) => !ENV_WORD.test(w)), env };
}

// BENCH_DIST: another build's dist/ (a copy of an earlier one), so two builds are measured back to back.
const ENTRY = process.env.BENCH_DIST ? path.join(process.env.BENCH_DIST, 'main.js') : 'dist/main.js';
const RAW = ['--import', 'tsx', 'bench/raw-server.ts'];

/**
 * The real server, `node dist/main.js`, on `storage` (DATABASE_URL, or DATA_DIR for PGlite),
 * with its defaults (live updates, webhooks) and rate limits raised, not bypassed: the limiter
 * still runs on every request, it just never refuses.
 */
export function startFull(ctx: BenchContext, name: string, storage: Record<string, string>): Promise<Server> {
  return startFullWith(ctx, name, startWords(), storage);
}

/**
 * startFull with start words of the caller's instead of `npm start`'s (bench/node-options.ts
 * compares two sets): node options and `NAME=value` environment, after a launcher and `node` or not.
 */
export function startFullWith(ctx: BenchContext, name: string, words: readonly string[], storage: Record<string, string>): Promise<Server> {
  const { launcher, options, env: startEnv } = splitStartWords(words);
  const env = {
    ...startEnv,
    ...storage,
    LOG_LEVEL: ctx.logLevel,
    TENURE_DEMO_PROJECT: 'false',
    TENURE_RATE_LIMIT_KEY: '1000000000',
    TENURE_RATE_LIMIT_IP: '1000000000',
    TENURE_RATE_LIMIT_BURST: '1000000000',
  };
  return startServer(name, [...options, ENTRY], env, ctx.tmp, launcher);
}

/** bench/raw-server.ts: bare `node:http` doing only the database work, on the same storage. */
export function startRaw(ctx: BenchContext, name: string, storage: Record<string, string>): Promise<Server> {
  return startServer(name, RAW, storage, ctx.tmp);
}

/**
 * Runs a bench file on its own (`npx tsx bench/<name>.ts`): a context over a fresh temporary
 * directory, the storages `storageVar` names in the environment (`pg`, `pglite`, else both), the
 * markdown `run` returns written to its section of bench/RESULTS.md and printed; then every server
 * this process started is stopped and the clean-ups run, whatever happened.
 */
export async function runStandalone(o: {
  name: string;
  command: string;
  storageVar: string;
  run: (ctx: BenchContext, storages: ('PostgreSQL' | 'PGlite')[]) => Promise<string>;
}): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), `tenure-${o.name}-`));
  const cleanups: (() => Promise<unknown>)[] = [];
  const ctx: BenchContext = {
    tmp,
    adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    logLevel: 'info',
    log: (line) => process.stderr.write(`${line}\n`),
    onCleanup: (step) => cleanups.push(step),
  };
  const only = process.env[o.storageVar];
  try {
    const markdown = await o.run(ctx, only === 'pg' ? ['PostgreSQL'] : only === 'pglite' ? ['PGlite'] : ['PostgreSQL', 'PGlite']);
    await writeSection(o.name, o.command, markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await stopAll();
    for (const step of cleanups) await step().catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
}
