import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutdownBudget } from '../../src/shutdown.js';
import { onPostgres } from '../support/harness.js';
import { freePort, productNode } from '../support/processes.js';
import { BIN, scratch, until } from './ops-support.js';

/**
 * A process whose output has nowhere to go still ends on SIGTERM, within the shutdown timeout: a
 * stdout or stderr pipe whose reader went away (a log shipper restarted, a parent killed), and a
 * log write that fails. (shutdown.test.ts: the graceful stop with work in flight.)
 */
describe('shutdown with nowhere to write', () => {
  const TIMEOUT_MS = 2_000;
  const LIMIT_MS = TIMEOUT_MS;
  const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
  const LOGGER = fileURLToPath(new URL('../../dist/logger.js', import.meta.url));
  let dir: Awaited<ReturnType<typeof scratch>>;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await scratch('dead-pipes');
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await dir.remove();
  });

  type Stdio = 'pipe' | number;
  function start(args: string[], env: Record<string, string>, stdout: Stdio = 'pipe') {
    const child = spawn(process.execPath, productNode(args), {
      env: { ...dir.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', TENURE_DEMO_PROJECT: 'false', TENURE_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS), ...env },
      stdio: ['ignore', stdout, 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    // Reading a destroyed pipe's end is over; what matters is only when, and how, the process ends.
    child.stdout?.on('error', () => {});
    child.stderr!.on('error', () => {});
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, output: () => out, exit };
  }

  /**
   * SIGTERM, then the exit; a process still running 2 s past the limit is killed and the test fails.
   * Exit code 0 is the proof it stopped within TENURE_SHUTDOWN_TIMEOUT_MS: at that deadline the
   * process ends itself with code 1 (the last case). The wall time seen from here is not asserted:
   * a starved machine adds its own delay to the process's exit.
   */
  async function terminate(p: ReturnType<typeof start>, limitMs = LIMIT_MS) {
    const started = Date.now();
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), limitMs + 2_000);
    const result = await p.exit;
    clearTimeout(timer);
    return { ...result, ms: Date.now() - started };
  }

  const lockReleased = () => onPostgres || !existsSync(path.join(dir.env.DATA_DIR!, 'tenure.lock'));

  it('exits although its last log lines meet a closed stdout pipe at exit', async () => {
    // The lines logged just before process.exit() are still buffered: the exit writes them
    // synchronously, and the pipe's reader is gone before anything found out.
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
      const logger = createLogger('info');
      logger.info('started');
      setTimeout(() => { logger.info('exiting'); process.exit(0); }, 20);`;
    const p = start(['--input-type=module', '-e', script], {});
    p.child.stdout!.destroy();
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    expect(await p.exit, p.output()).toEqual({ code: 0, signal: null });
    clearTimeout(timer);
  });

  for (const which of ['stdout', 'stderr'] as const) {
    it(`server: exits 0 within the timeout after its ${which} pipe closed`, async () => {
      const p = start([MAIN], {});
      await until(() => p.output().includes('Server listening at'), 'the server to listen', 45_000);
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(p.output())![1]!;
      p.child[which]!.destroy();
      // Requests after the pipe closed are logged into it (and the server keeps serving).
      for (let i = 0; i < 3; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ended = await terminate(p);
      expect(ended, p.output()).toMatchObject({ code: 0, signal: null });
        expect(lockReleased()).toBe(true);
    }, 60_000);
  }

  it('server: keeps serving when every log write fails, and exits 0 within the timeout', async () => {
    // /dev/full refuses every write (ENOSPC): the log lines are lost, the service is not.
    const full = openSync('/dev/full', 'w');
    const port = await freePort();
    const p = start([MAIN], { PORT: String(port) }, full);
    closeSync(full);
    const url = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 'the server to answer', 30_000);
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(p.child.exitCode, p.output()).toBeNull();
    const ended = await terminate(p);
    expect(ended, p.output()).toMatchObject({ code: 0, signal: null });
    expect(lockReleased()).toBe(true);
  }, 60_000);

  it('worker: exits 0 within the timeout after its stdout pipe closed', async () => {
    const p = start([BIN, 'worker'], {});
    await until(() => p.output().includes('webhook worker running'), 'the worker to run', 45_000);
    p.child.stdout!.destroy();
    const ended = await terminate(p);
    expect(ended, p.output()).toMatchObject({ code: 0, signal: null });
    expect(lockReleased()).toBe(true);
  }, 60_000);

  it('a stop that never finishes ends at the deadline, with exit code 1', async () => {
    const shutdown = fileURLToPath(new URL('../../dist/shutdown.js', import.meta.url));
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
      import { shutdownRequested } from ${JSON.stringify(shutdown)};
      const logger = createLogger('info');
      setInterval(() => {}, 1000);
      void shutdownRequested({ logger, timeoutMs: 100 }).then(() => new Promise(() => {}));
      process.stderr.write('ready\\n');`;
    const p = start(['--input-type=module', '-e', script], {});
    await until(() => p.output().includes('ready'), 'the script to start');
    const ended = await terminate(p, shutdownBudget(100).exitMs);
    expect(ended, p.output()).toMatchObject({ code: 1, signal: null });
    expect(p.output()).toContain('shutdown did not finish in time');
  }, 30_000);
});
