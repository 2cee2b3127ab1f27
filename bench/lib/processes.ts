import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Servers under test run as child processes on loopback, each on its own port. Every child is
 * tracked so that `stopAll` (called on exit, error and Ctrl-C) leaves nothing running.
 */

export interface Server {
  name: string;
  url: string;
  /** The server process's id (bench/lib/memory.ts reads its /proc). */
  pid: number;
  /** CPU seconds (user + system) the server process has used so far; NaN where /proc is missing. */
  cpuSeconds(): number;
  /** The server process's resident memory now and its peak so far (VmRSS, VmHWM), in MiB; NaN where /proc is missing. */
  memoryMiB(): { rss: number; peak: number };
  /** The last lines of its output, for an error message. */
  logTail(): string;
  stop(): Promise<void>;
}

const live = new Map<number, ChildProcess>();

/** A free loopback port, found by binding port 0 and letting it go. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Environment of a child: ours without any storage settings, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'LOG_LEVEL', 'REDIS_URL', 'NODE_OPTIONS']) delete base[k];
  return { ...base, HOST: '127.0.0.1', ...env };
}

/**
 * Starts `node <args>` and waits until it answers HTTP. Output goes to `<logDir>/<name>.log`
 * (shown if the child fails to start), not through a pipe the bench would have to drain. A
 * `launcher` (`sh scripts/with-memory-settings.sh`) runs first and execs node: the pid stays node's.
 */
export async function startServer(name: string, args: string[], env: Record<string, string>, logDir: string, launcher: readonly string[] = []): Promise<Server> {
  const port = await freePort();
  const logFile = path.join(logDir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const [command, ...commandArgs] = [...launcher, process.execPath, ...args];
  const child = spawn(command!, commandArgs, { env: childEnv({ ...env, PORT: String(port) }), stdio: ['ignore', fd, fd] });
  closeSync(fd);
  live.set(child.pid!, child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(() => live.delete(child.pid!), () => undefined);
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited during start-up:\n${tail(logFile)}`);
    }
    try {
      await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        await stopChild(child, exited);
        throw new Error(`${name} did not answer within 90 s:\n${tail(logFile)}`);
      }
      await sleep(100);
    }
  }
  return { name, url, pid: child.pid!, cpuSeconds: () => cpuSecondsOf(child.pid!), memoryMiB: () => memoryOf(child.pid!), logTail: () => tail(logFile), stop: () => stopChild(child, exited) };
}

/** SIGTERM (both servers close their database and release a PGlite lock on it), then SIGKILL. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Kills every child still running (used on error and interrupt paths). */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...live.values()].map((child) => stopChild(child, new Promise((resolve) => child.once('exit', () => resolve())))),
  );
}

const CLOCK_TICKS_PER_S = 100;

/** utime + stime from /proc/<pid>/stat (fields 14 and 15, counted after the parenthesised name). */
function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return Number.NaN;
  }
}

/** VmRSS and VmHWM from /proc/<pid>/status (kB there), in MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: Number.NaN, peak: Number.NaN };
  }
}

/**
 * CPU seconds used so far by the PostgreSQL server on this machine: every process named
 * `postgres` (utime + stime), plus what the postmaster has collected from its exited children
 * (cutime + cstime: the backends of connections closed since). NaN when none is readable (a
 * server elsewhere, no /proc). Read before and after a run, the difference is the database's work.
 */
export function databaseCpuSeconds(): number {
  let ticks = 0;
  let seen = false;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return Number.NaN;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      seen = true;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return seen ? ticks / CLOCK_TICKS_PER_S : Number.NaN;
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no output)';
  }
}
