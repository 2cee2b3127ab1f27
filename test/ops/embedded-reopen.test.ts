import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A first start on embedded storage migrates, closes the database and opens it again, so the
 * memory the migrations grew is given back (docs/memory.md, "Embedded storage at start"). The
 * closed instance's WebAssembly memory (128 MB reserved, ~33 MB resident) goes only when V8
 * collects its object, and a server at rest gives V8 no reason to: soon after it listens, the
 * server must hold one WebAssembly memory, not the closed one beside it.
 */

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/**
 * PGlite's WebAssembly memories in process `pid`, read from its maps: V8 reserves each WebAssembly
 * memory with guard pages, an anonymous read-write mapping (the memory's size) followed by an
 * inaccessible one, 8 GiB or more together. PGlite's are 128 MiB and more; undici's HTTP parser
 * (node's fetch) has small ones of its own.
 */
async function pgliteMemories(pid: number): Promise<number> {
  const maps = (await readFile(`/proc/${pid}/maps`, 'utf8'))
    .split('\n')
    .map((line) => /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\S+)\s*(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), perm: m[3]!, named: m[5] !== '' }));
  let count = 0;
  for (let i = 0; i + 1 < maps.length; i++) {
    const [a, b] = [maps[i]!, maps[i + 1]!];
    if (a.perm === 'rw-p' && !a.named && b.perm === '---p' && a.end === b.start && b.end - a.start >= 8n * 2n ** 30n && a.end - a.start >= 64n * 2n ** 20n) count++;
  }
  return count;
}

describe('embedded storage, first start', () => {
  it('holds one WebAssembly memory soon after it listens, not the one closed after migrating too', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'tenure-reopen-'));
    dirs.push(dataDir);
    // Started as `npm start` starts it (without npm): its node options decide when V8 collects.
    const [command, ...args] = (JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
    const child = spawn(command!, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', DATA_DIR: path.join(dataDir, 'data'), TENURE_DEMO_PROJECT: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the server did not listen within 90 s:\n${out}`)), 90_000);
        const read = (chunk: Buffer) => {
          out += chunk.toString();
          if (!/Server listening at/.test(out)) return;
          clearTimeout(timer);
          resolve();
        };
        child.stdout.on('data', read);
        child.stderr.on('data', read);
        void exited.then(() => (clearTimeout(timer), reject(new Error(`the server exited:\n${out}`))));
      });
      // The closed one is collected from a second after the reopen on (REOPEN_COLLECT); without
      // that it stayed for minutes. Read for up to 30 s.
      let memories = await pgliteMemories(child.pid!);
      for (let waited = 0; memories > 1 && waited < 30_000; waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        memories = await pgliteMemories(child.pid!);
      }
      expect(memories).toBe(1);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
