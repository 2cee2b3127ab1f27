import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Real processes for the cluster tests: tenure servers (`node dist/main.js`, built by `npm test`'s
 * pretest) and throwaway Redis servers on spare ports. Everything listens on loopback only.
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
