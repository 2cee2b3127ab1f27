import { chmod, lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { rowsOf } from '../../src/database/db.js';
import { testConfig } from '../support/harness.js';
import { scratch, seedDataDir } from './ops-support.js';

/**
 * The embedded data directory is the owner's alone (docs/configuration.md, "Embedded storage"):
 * after a start, and after writes, every file in it is 0600 and every directory 0700, on a first
 * start and on a directory an older tenure left world-writable (PGlite lays out its files 0666).
 */

/** Every path under `dir` (itself included) whose permissions are not the owner's alone, with its mode. */
async function loose(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (p: string): Promise<void> => {
    const s = await lstat(p);
    if (s.isSymbolicLink()) return;
    const mode = s.mode & 0o777;
    if (mode !== (s.isDirectory() ? 0o700 : 0o600)) found.push(`${mode.toString(8)} ${path.relative(dir, p) || '.'}`);
    if (s.isDirectory()) for (const name of await readdir(p)) await visit(path.join(p, name));
  };
  await visit(dir);
  return found;
}

async function count(dir: string): Promise<number> {
  const s = await lstat(dir);
  if (!s.isDirectory()) return 1;
  let n = 1;
  for (const name of await readdir(dir)) n += await count(path.join(dir, name));
  return n;
}

const open = (dataDir: string) =>
  createContainer({ config: testConfig({ DATA_DIR: dataDir, TENURE_ENCRYPTION_KEY: '' }), logger: createLogger('silent'), open: { lockWaitMs: 0 } });

describe('the embedded data directory’s permissions', () => {
  it('a first start makes DATA_DIR, the database, the lock and the key file the owner’s alone; writes that add WAL and relation files keep them so', async () => {
    const dir = await scratch('modes-first', { empty: true, embedded: true });
    try {
      const dataDir = dir.env.DATA_DIR!;
      const container = await open(dataDir);
      try {
        expect(await count(dataDir)).toBeGreaterThan(1_000);
        expect(await loose(dataDir)).toStrictEqual([]);
        // Writes that make new relation files and new WAL segments, then flush them.
        const { db } = container.database;
        await db.execute(sql`CREATE TABLE modes_probe (n int, filler text)`);
        for (let i = 0; i < 4; i++) {
          await db.execute(sql`INSERT INTO modes_probe SELECT g, repeat(md5(g::text), 30) FROM generate_series(1, 20000) g`);
          await db.execute(sql`SELECT pg_switch_wal()`);
        }
        await db.execute(sql`CREATE INDEX modes_probe_idx ON modes_probe (n)`);
        await db.execute(sql`CHECKPOINT`);
        const wal = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM pg_ls_waldir()`))[0]!.n;
        expect(wal).toBeGreaterThan(1);
        expect(await loose(dataDir)).toStrictEqual([]);
      } finally {
        await container.close();
      }
      expect(await loose(dataDir)).toStrictEqual([]);
    } finally {
      await dir.remove();
    }
    // A first start (initdb) and 80,000 rows with WAL switches: 10-20 s alone, 36 s in a full CI
    // run on two busy cores, past vitest's 30 s default.
  }, 120_000);

  it('a start tightens what an older tenure left world-writable (PGlite’s own files included), and follows no symbolic link out of DATA_DIR', async () => {
    const dir = await scratch('modes-existing', { empty: true, embedded: true });
    try {
      const dataDir = dir.env.DATA_DIR!;
      await seedDataDir(dataDir);
      await chmod(dataDir, 0o777);
      await writeFile(path.join(dataDir, 'demo-key.json'), '{}\n', { mode: 0o666 });
      await chmod(path.join(dataDir, 'demo-key.json'), 0o666);
      await mkdir(path.join(dataDir, 'left-behind'), { mode: 0o777 });
      await chmod(path.join(dataDir, 'left-behind'), 0o777);
      const outside = path.join(dir.dir, 'outside.txt');
      await writeFile(outside, 'not tenure’s\n');
      await chmod(outside, 0o644);
      await symlink(outside, path.join(dataDir, 'link-out'));
      const before = await loose(dataDir);
      expect(before.filter((l) => l.startsWith('666 pglite/')).length).toBeGreaterThan(900);
      expect(before).toEqual(expect.arrayContaining(['777 .', '666 demo-key.json', '777 left-behind']));

      const container = await open(dataDir);
      try {
        expect(await loose(dataDir)).toStrictEqual([]);
      } finally {
        await container.close();
      }
      expect((await lstat(outside)).mode & 0o777).toBe(0o644);
    } finally {
      await dir.remove();
    }
  });
});
