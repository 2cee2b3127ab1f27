import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/database/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A dump of a migrated database, for in-memory PGlite (`loadDataDir`). */
    pgliteSeed: string;
    /** A dump of the same database before migrating (just after initdb), for tests of migrating. */
    pgliteEmptySeed: string;
    /** A migrated embedded data directory (a DATA_DIR) to copy for real server and CLI processes. */
    pgliteDataDir: string;
  }
}

/**
 * Creating and migrating a PGlite database costs seconds (initdb, then the migrations); loading a
 * dump of one costs a fraction. Migrate once per run: every in-process harness starts its own
 * in-memory database from the dump, and every test that runs the built server or CLI copies a
 * data directory made from the same dump, instead of each paying for initdb again.
 */
export default async function setup(project: TestProject) {
  // Several projects (http, storage-pglite) use this setup in one vitest process:
  // they share one seed, made once, and the last to finish removes it.
  const shared = ((globalThis as { tenurePgliteSeed?: Shared }).tenurePgliteSeed ??= { users: 0, made: makeSeed() });
  shared.users++;
  const { root, seed, emptySeed, dataDir } = await shared.made;
  project.provide('pgliteSeed', seed);
  project.provide('pgliteEmptySeed', emptySeed);
  project.provide('pgliteDataDir', dataDir);
  return async () => {
    if (--shared.users === 0) await rm(root, { recursive: true, force: true });
  };
}

interface Shared {
  users: number;
  made: Promise<{ root: string; seed: string; emptySeed: string; dataDir: string }>;
}

async function makeSeed(): Promise<{ root: string; seed: string; emptySeed: string; dataDir: string }> {
  const root = await mkdtemp(path.join(tmpdir(), 'tenure-test-seed-'));
  const database = await openDatabase({ kind: 'pglite-memory' });
  const emptySeed = path.join(root, 'empty.tar');
  let dump: Blob;
  try {
    // An initdb costs a second or more of CPU: tests that need a database nothing was applied to
    // load this copy of one instead.
    await writeFile(emptySeed, Buffer.from(await (await database.dump()).arrayBuffer()));
    await database.migrate();
    dump = await database.dump();
  } finally {
    await database.close();
  }
  const seed = path.join(root, 'seed.tar');
  await writeFile(seed, Buffer.from(await dump.arrayBuffer()));

  // The layout the server opens: <DATA_DIR>/pglite.
  const dataDir = path.join(root, 'data');
  await mkdir(dataDir);
  const embedded = await PGlite.create(path.join(dataDir, 'pglite'), { loadDataDir: dump });
  await embedded.close();
  return { root, seed, emptySeed, dataDir };
}
