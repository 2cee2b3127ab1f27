import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/store/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteSeed: string;
  }
}

/**
 * Creating and migrating a PGlite database costs seconds; loading a dump of one costs a fraction.
 * Migrate once per run, and let every test file start its own in-memory database from the dump.
 */
export default async function setup(project: TestProject) {
  const database = await openDatabase({ kind: 'pglite-memory' });
  await database.migrate();
  const file = path.join(tmpdir(), `tenure-test-seed-${process.pid}-${randomBytes(4).toString('hex')}.tar`);
  await writeFile(file, Buffer.from(await (await database.dump()).arrayBuffer()));
  await database.close();
  project.provide('pgliteSeed', file);
  return () => rm(file, { force: true });
}
