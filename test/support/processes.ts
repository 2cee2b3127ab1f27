import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Real processes for the cluster tests: tenure servers (`node dist/main.js`, built by `npm test`'s
 * pretest) and throwaway Redis and PostgreSQL servers on spare ports. Everything listens on loopback only.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * The flags of `node` for every process of a test run: vitest's workers (vitest.config.ts) and the
 * product processes tests start (productNode). V8's --liftoff-only compiles WebAssembly with its
 * baseline compiler only: PGlite's module is otherwise recompiled by the optimizing tier as it
 * warms up, which a process living seconds, or a test's few queries, never pays back. Measured on
 * an embedded worker's start (`tenure worker`, an existing DATA_DIR): 2.6 s of CPU against 4.8,
 * ready ~1 s sooner; the storage tier on PGlite ~10% less CPU. The code run is the same; only how
 * V8 compiles it differs (on PostgreSQL no WebAssembly is loaded at all).
 */
export const TEST_NODE_FLAGS: readonly string[] = ['--liftoff-only'];

/** The arguments of `node` for a product process a test starts (the built server, the CLI): `productNode([MAIN])`. */
export const productNode = (args: string[]): string[] => [...TEST_NODE_FLAGS, ...args];

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout (its JSON log lines). */
  output(): string;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts a tenure server on a free port and resolves once it listens. */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, productNode([MAIN]), {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', TENURE_DEMO_PROJECT: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), timeoutMs);
    const check = () => {
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisProcess {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A Redis server of the test's own (Debian's redis-server), keeping nothing on disk. */
export async function startRedis(port: number): Promise<RedisProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis did not start:\n${out}`)), 10_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis exited with ${code}:\n${out}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

export interface PostgresProcess {
  /** The `postgres` database, as the superuser `postgres` (trust, loopback only). */
  url: string;
  port: number;
  /** Everything the server logged (its crash-restarts included). */
  output(): string;
  /** Resolves once the server has logged `ready to accept connections` `count` times in all (a restart after a crash is one more). */
  ready(count: number, timeoutMs?: number): Promise<void>;
  /**
   * Stops the server (a fast shutdown), waits `downMs`, starts it again and resolves once it is
   * ready, with when it had exited (`down`) and when it was started again (`started`), in ms since
   * the epoch: between the two, nothing answers on its port.
   */
  restart(downMs: number): Promise<{ down: number; started: number }>;
  /** Stops the server (a fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Where `initdb` and `postgres` are (Debian keeps them off PATH, under /usr/lib/postgresql/<n>/bin),
 * or why there are none.
 */
export function postgresBinaries(): { bin: string } | { missing: string } {
  const dirs = [
    ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)).map((v) => `/usr/lib/postgresql/${v}/bin`) : []),
    ...(process.env.PATH ?? '').split(':').filter(Boolean),
  ];
  const bin = dirs.find((d) => existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'postgres')));
  return bin ? { bin } : { missing: `no initdb and postgres binaries under /usr/lib/postgresql/*/bin or on PATH (${dirs.length} directories looked at): install PostgreSQL's server package` };
}

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory, a spare port), for what
 * must not touch the shared one: a backend killed with SIGKILL makes the postmaster end and restart
 * every backend of its server. PostgreSQL refuses to run as root, so as root (CI) initdb and the
 * server run as the `postgres` user (setpriv: the spawned process is the server itself, no
 * intermediate one).
 */
export async function startPostgres(bin: string, port: number): Promise<PostgresProcess> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tenure-pg-'));
  const asServerUser = (command: string, args: string[]): [string, string[]] =>
    process.getuid?.() === 0 ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', command, ...args]] : [command, args];
  if (process.getuid?.() === 0) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
    await chown(dir, uid!, gid!);
  }
  const data = path.join(dir, 'data');
  const [initdb, initArgs] = asServerUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C']);
  await new Promise<void>((resolve, reject) => {
    execFile(initdb, initArgs, (err, _stdout, stderr) => (err ? reject(new Error(`initdb failed: ${stderr}`)) : resolve()));
  });
  const [postgres, args] = asServerUser(path.join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`,
    // fsync off: what a crash of PostgreSQL (not of the machine) loses does not depend on it; a
    // commit still waits for its WAL to be written, so an acknowledged write survives a SIGKILL.
    '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'shared_buffers=16MB',
    '-c', 'max_connections=50', '-c', 'restart_after_crash=on',
  ]);
  let out = '';
  const launch = () => {
    const started = spawn(postgres, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    started.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    return started;
  };
  let child = launch();
  const readyCount = () => out.split('database system is ready to accept connections').length - 1;
  const ready = async (count: number, timeoutMs = 20_000) => {
    const start = Date.now();
    while (readyCount() < count) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited:\n${out}`);
      if (Date.now() - start > timeoutMs) throw new Error(`postgres not ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // A fast shutdown: every session is ended (57P01), then the server exits.
  const shutDown = async () => {
    child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited(child);
    clearTimeout(killer);
  };
  try {
    await ready(1);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    output: () => out,
    ready,
    async restart(downMs) {
      const before = readyCount();
      await shutDown();
      const down = Date.now();
      await new Promise((r) => setTimeout(r, downMs));
      const started = Date.now();
      child = launch();
      await ready(before + 1);
      return { down, started };
    },
    async stop() {
      await shutDown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
