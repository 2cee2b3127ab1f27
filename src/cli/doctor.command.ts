import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { ConfigError, loadConfig, storageOf, type Config } from '../config.js';
import { checkRedis, probeRedisClient, reasonOf } from '../observability/probes.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { openDatabase, pendingMigrations, type Database } from '../database/db.js';

/**
 * `npx tenure doctor`: what stands between this machine and a running tenure, each finding with
 * a fix in plain words. It reads, never writes: no migration is applied, no data directory made.
 */

export interface Finding {
  name: 'configuration' | 'database' | 'migrations' | 'redis';
  status: 'ok' | 'warn' | 'fail' | 'skipped';
  detail: string;
  fix?: string;
}

/** Where a PostgreSQL URL points, without its user or password. */
function describeUrl(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? '6379' : '5432')}${u.pathname === '/' ? '' : u.pathname}`;
}

function codeOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

/** The usual reasons a PostgreSQL connection fails, and what to do about each. */
function postgresFix(code: string | undefined, where: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return `Nothing accepts connections at ${where}. Start PostgreSQL, or correct the host and port in DATABASE_URL.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `The host name in DATABASE_URL (${where}) does not resolve. Check its spelling, or use an IP address.`;
    case '28P01':
    case '28000':
      return 'PostgreSQL refused the user or password in DATABASE_URL. Correct them, or grant this user access (pg_hba.conf).';
    case '3D000':
      return `The database in DATABASE_URL does not exist. Create it (createdb, or CREATE DATABASE), then run "npx tenure migrate".`;
    default:
      return 'Check that PostgreSQL runs and that DATABASE_URL (host, port, user, password, database) is right.';
  }
}

function configuration(config: Config): Finding {
  const storage =
    config.storage.kind === 'postgres'
      ? `PostgreSQL at ${describeUrl(config.storage.url)}`
      : `embedded PGlite in ${path.resolve(config.storage.dataDir)}`;
  const limits = config.redisUrl ? `rate limits in Redis at ${describeUrl(config.redisUrl)}` : 'rate limits in memory';
  return { name: 'configuration', status: 'ok', detail: `${storage}; ${limits}; serves on ${config.http.host}:${config.http.port}` };
}

async function openForChecks(config: Config): Promise<{ database: Database | null; finding: Finding | null; held?: string }> {
  if (config.storage.kind === 'pglite') {
    const dir = path.resolve(config.storage.dataDir);
    const exists = await access(path.join(dir, 'pglite'), constants.F_OK).then(() => true, () => false);
    if (!exists) {
      return {
        database: null,
        finding: { name: 'database', status: 'warn', detail: `no database in ${dir} yet`, fix: 'It is created on the first "npx tenure migrate" or "npm start".' },
      };
    }
  }
  try {
    return { database: await openDatabase(storageOf(config), { lockWaitMs: 0 }), finding: null };
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      return {
        database: null,
        held: path.resolve(err.dataDir),
        finding: {
          name: 'database',
          status: 'fail',
          detail: `the data directory ${path.resolve(err.dataDir)} is held by another tenure process`,
          fix: 'Embedded storage allows one process at a time. Stop that process (a running server or worker) to run other commands; to check a running server, ask it: curl http://HOST:PORT/readyz.',
        },
      };
    }
    return { database: null, finding: { name: 'database', status: 'fail', detail: `cannot be opened (${reasonOf(err)})`, fix: 'Check DATA_DIR: it must be a directory this user can write.' } };
  }
}

async function databaseAndMigrations(config: Config): Promise<Finding[]> {
  const { database, finding, held } = await openForChecks(config);
  if (!database && held !== undefined) {
    const asked = await askRunningServer(config, held);
    if (asked) return asked;
  }
  if (!database) {
    const fresh = finding!.status === 'warn';
    return [
      finding!,
      fresh
        ? { name: 'migrations', status: 'warn', detail: 'none applied yet', fix: 'Run "npx tenure migrate" (the server also applies them when it starts).' }
        : { name: 'migrations', status: 'skipped', detail: 'not checked: the database could not be opened' },
    ];
  }
  try {
    const where = config.storage.kind === 'postgres' ? describeUrl(config.storage.url) : path.resolve(config.storage.dataDir);
    try {
      await database.db.execute(sql`SELECT 1`);
    } catch (err) {
      return [
        { name: 'database', status: 'fail', detail: `unreachable at ${where} (${reasonOf(err)})`, fix: postgresFix(codeOf(err), where) },
        { name: 'migrations', status: 'skipped', detail: 'not checked: the database is unreachable' },
      ];
    }
    const ok: Finding = { name: 'database', status: 'ok', detail: `reachable (${database.kind === 'postgres' ? `PostgreSQL at ${where}` : `PGlite in ${where}`})` };
    try {
      const pending = await pendingMigrations(database.db);
      return [
        ok,
        pending.length === 0
          ? { name: 'migrations', status: 'ok', detail: 'all applied' }
          : { name: 'migrations', status: 'fail', detail: `${pending.length} pending: ${pending.join(', ')}`, fix: 'Run "npx tenure migrate" (the server also applies them when it starts).' },
      ];
    } catch (err) {
      return [ok, { name: 'migrations', status: 'fail', detail: `could not be read (${reasonOf(err)})`, fix: 'Check that the database user may read the drizzle schema.' }];
    }
  } finally {
    await database.close();
  }
}

/** How long doctor waits for a running server's `/readyz`. */
const READYZ_TIMEOUT_MS = 3_000;

interface ReadyzCheck {
  name: string;
  status: 'ok' | 'failed' | 'degraded' | 'skipped';
  detail: string;
}

/**
 * Embedded storage held by a running tenure: the database cannot be opened here, so doctor asks
 * that server's `/readyz` (at HOST:PORT of this configuration; a wildcard host is asked on
 * loopback) for its database and migrations checks. Null when nothing answers there as tenure does.
 */
async function askRunningServer(config: Config, dataDir: string): Promise<Finding[] | null> {
  const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}/readyz`;
  let checks: ReadyzCheck[];
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(READYZ_TIMEOUT_MS) });
    const body = (await res.json()) as { data?: { checks?: ReadyzCheck[] }; error?: { checks?: ReadyzCheck[] } };
    const found = body.data?.checks ?? body.error?.checks;
    if (!Array.isArray(found)) return null;
    checks = found;
  } catch {
    return null;
  }
  const served = (name: 'database' | 'migrations'): Finding => {
    const c = checks.find((x) => x.name === name);
    if (!c) return { name, status: 'skipped', detail: `not reported by the server at ${url}` };
    const where = name === 'database' ? ` (PGlite in ${dataDir}, held by the server at ${url})` : ` (as the server at ${url} reports)`;
    return c.status === 'ok'
      ? { name, status: 'ok', detail: `${c.detail}${where}` }
      : { name, status: c.status === 'skipped' ? 'skipped' : 'fail', detail: `${c.detail}${where}`, fix: 'Read the server\'s log; docs/operations.md explains each readiness check.' };
  };
  return [served('database'), served('migrations')];
}

async function redis(config: Config): Promise<Finding> {
  if (!config.redisUrl) return { name: 'redis', status: 'skipped', detail: 'REDIS_URL not set: rate limits are kept in memory (fine for one node)' };
  const client = probeRedisClient(config.redisUrl);
  try {
    const result = await checkRedis(client);
    if (result.status === 'ok') return { name: 'redis', status: 'ok', detail: `reachable at ${describeUrl(config.redisUrl)}` };
    return {
      name: 'redis',
      status: 'fail',
      detail: `${result.detail} at ${describeUrl(config.redisUrl)}`,
      fix: 'Start Redis, or correct REDIS_URL (host, port, password). Unset REDIS_URL to keep rate limits in memory on a single node.',
    };
  } finally {
    client.disconnect();
  }
}

/** `env`: the environment to check (default: this process's, read by src/config.ts). */
export async function diagnose(env?: NodeJS.ProcessEnv): Promise<Finding[]> {
  let config: Config;
  try {
    config = env ? loadConfig(env) : loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return [
      {
        name: 'configuration',
        status: 'fail',
        detail: err.message,
        fix: `Correct or unset ${err.variable} (docs/configuration.md lists every variable and its default).`,
      },
      ...(['database', 'migrations', 'redis'] as const).map((name): Finding => ({ name, status: 'skipped', detail: 'not checked: the configuration is invalid' })),
    ];
  }
  const [storage, cache] = await Promise.all([databaseAndMigrations(config), redis(config)]);
  return [configuration(config), ...storage, cache];
}

const MARK = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skipped: 'skip' } as const;

export function formatFindings(findings: Finding[]): string {
  const width = Math.max(...findings.map((f) => f.name.length));
  const lines = findings.flatMap((f) => [
    `  ${MARK[f.status]}  ${f.name.padEnd(width)}  ${f.detail}`,
    ...(f.fix && f.status !== 'ok' ? [`        ${' '.repeat(width)}  fix: ${f.fix}`] : []),
  ]);
  const failed = findings.filter((f) => f.status === 'fail').length;
  const warned = findings.some((f) => f.status === 'warn');
  const verdict =
    failed > 0
      ? `${failed} check${failed === 1 ? '' : 's'} failed.`
      : warned
        ? 'Nothing is broken; see the warnings above.'
        : 'Everything tenure needs is in place.';
  return `tenure doctor\n\n${lines.join('\n')}\n\n${verdict}\n`;
}
