import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The two ways the README and docs/memory.md start a server on one machine: `npm start` and
 * `npm run start:small` (the same server with V8 told to favour memory over speed). Each is run
 * through npm exactly as a reader types it, on one embedded data directory in turn, and must answer
 * its liveness probe; each is stopped as a terminal's Ctrl-C stops it (the whole process group).
 */

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function runScript(script: string, dataDir: string): Promise<{ health: number; exitCode: number | null }> {
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', DATA_DIR: dataDir, TENURE_DEMO_PROJECT: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = once(child, 'exit');
  let out = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm run ${script} did not listen within 60 s:\n${out}`)), 60_000);
      const read = (chunk: Buffer) => {
        out += chunk.toString();
        const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (listening) {
          clearTimeout(timer);
          resolve(listening[1]!);
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      void exited.then(() => (clearTimeout(timer), reject(new Error(`npm run ${script} exited:\n${out}`))));
    });
    const health = (await fetch(`${url}/healthz`)).status;
    process.kill(-child.pid!, 'SIGINT');
    const [exitCode] = (await exited) as [number | null];
    return { health, exitCode };
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
}

describe('start scripts', () => {
  it('npm start and npm run start:small each serve, answer /healthz and stop on Ctrl-C', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'tenure-start-scripts-'));
    dirs.push(dataDir);
    for (const script of ['start', 'start:small']) {
      const { health, exitCode } = await runScript(script, dataDir);
      expect({ script, health }).toStrictEqual({ script, health: 200 });
      expect(exitCode === 0 || exitCode === null).toBe(true);
    }
  }, 150_000);
});
