import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productNode } from '../support/processes.js';
import { BIN, scratch, until } from './ops-support.js';

/**
 * A SIGTERM that comes while a process is still starting (a deploy rolled back at once, an
 * orchestrator that saw /healthz answer before the worker runtime was up) is heard: the process
 * finishes its start, then stops as it would have later, exit code 0. Before, the handler was
 * installed only once the start was over, and such a signal killed the process half-started.
 * The start is caught early: the data directory's lock is the first thing it takes.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
let dir: Awaited<ReturnType<typeof scratch>>;
beforeAll(async () => {
  dir = await scratch('signal-at-start', { embedded: true });
});
afterAll(() => dir.remove());

async function signalledWhileStarting(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string; lockHeld: boolean }> {
  const child = spawn(process.execPath, productNode(args), {
    env: { ...dir.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', TENURE_DEMO_PROJECT: 'false', TENURE_SHUTDOWN_TIMEOUT_MS: '30000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const lock = path.join(dir.env.DATA_DIR!, 'tenure.lock');
  try {
    await until(() => existsSync(lock), 'the start to take the data directory', 30_000);
    const started = /Server listening at|worker running/.test(output);
    child.kill('SIGTERM');
    const ended = await exit;
    return { ...ended, output: started ? `(it had started already)\n${output}` : output, lockHeld: existsSync(lock) };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe('a signal while starting', () => {
  it('the server finishes its start, then stops cleanly: exit 0, the data directory released', async () => {
    const ended = await signalledWhileStarting([MAIN]);
    expect({ code: ended.code, signal: ended.signal }, ended.output).toEqual({ code: 0, signal: null });
    expect(ended.output).toContain('shutting down');
    expect(ended.lockHeld).toBe(false);
  }, 60_000);

  it('so does the worker', async () => {
    const ended = await signalledWhileStarting([BIN, 'worker']);
    expect({ code: ended.code, signal: ended.signal }, ended.output).toEqual({ code: 0, signal: null });
    expect(ended.output).toContain('webhook worker stopping');
    expect(ended.lockHeld).toBe(false);
  }, 60_000);
});
