import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The two ways the README and docs/memory.md start a server on one machine: `npm start` and
 * `npm run start:small` (the same server with V8 told to favour memory over speed). Each is run
 * through npm exactly as a reader types it, on one embedded data directory in turn, and must answer
 * its liveness probe; each is stopped as a terminal's Ctrl-C stops it (the whole process group).
 * The server process itself must have glibc's malloc setting in its environment (read from /proc:
 * it is what keeps ~35 MiB of freed memory from staying with the process, docs/memory.md).
 */

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** The environment of the server (`node … dist/main.js`) among the processes of group `pgid`. */
async function serverEnvironment(pgid: number): Promise<Map<string, string>> {
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    try {
      const group = Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[2]);
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      if (group !== pgid || argv[0]?.endsWith('node') !== true || argv.at(-2) !== 'dist/main.js') continue;
      const entries = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter(Boolean);
      return new Map(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    } catch {
      continue; // a process that exited while it was read
    }
  }
  throw new Error(`no node dist/main.js process in process group ${pgid}`);
}

async function runScript(script: string, dataDir: string): Promise<{ health: number; exitCode: number | null; malloc: string | undefined }> {
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
    const malloc = (await serverEnvironment(child.pid!)).get('MALLOC_MMAP_THRESHOLD_');
    process.kill(-child.pid!, 'SIGINT');
    const [exitCode] = (await exited) as [number | null];
    return { health, exitCode, malloc };
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
}

describe('start scripts', () => {
  it('npm start and npm run start:small each serve with the malloc setting, answer /healthz and stop on Ctrl-C', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'tenure-start-scripts-'));
    dirs.push(dataDir);
    for (const script of ['start', 'start:small']) {
      const { health, exitCode, malloc } = await runScript(script, dataDir);
      expect({ script, health, malloc }).toStrictEqual({ script, health: 200, malloc: '32768' });
      expect(exitCode === 0 || exitCode === null).toBe(true);
    }
  }, 150_000);
});

describe('scripts/with-memory-settings.sh', () => {
  /** What MALLOC_MMAP_THRESHOLD_ the command the script runs sees, in environment `env`. */
  const seen = (env: Record<string, string>) =>
    execFileSync('sh', ['scripts/with-memory-settings.sh', 'sh', '-c', 'echo "${MALLOC_MMAP_THRESHOLD_-unset}"'], { cwd: root, env: { PATH: process.env.PATH ?? '', ...env } })
      .toString()
      .trim();

  it('sets the malloc setting on embedded storage only, and keeps an operator\'s own value', () => {
    expect(seen({})).toBe('32768');
    expect(seen({ DATA_DIR: '/data' })).toBe('32768');
    expect(seen({ DATABASE_URL: 'postgres://tenure@db:5432/tenure' })).toBe('unset');
    expect(seen({ MALLOC_MMAP_THRESHOLD_: '65536' })).toBe('65536');
    expect(seen({ DATABASE_URL: 'postgres://tenure@db:5432/tenure', MALLOC_MMAP_THRESHOLD_: '131072' })).toBe('131072');
  });

  it('runs the command in its own place (exec), passing its arguments and exit status', () => {
    const pids = execFileSync('sh', ['scripts/with-memory-settings.sh', 'sh', '-c', 'echo "$$ $PPID"'], { cwd: root }).toString().trim().split(' ');
    // The command's parent is this test's process, not a shell left waiting for it.
    expect(Number(pids[1])).toBe(process.pid);
    expect(() => execFileSync('sh', ['scripts/with-memory-settings.sh', 'sh', '-c', 'exit 3'], { cwd: root, stdio: 'ignore' })).toThrow(expect.objectContaining({ status: 3 }));
  });
});
