import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, inject } from 'vitest';
import type { CliIo } from '../../src/cli/program.js';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { cli } from '../support/cli.js';
import { createTestDatabase, onPostgres } from '../support/harness.js';
import { productNode } from '../support/processes.js';

/**
 * Real processes for the operations suites (test/ops, test/cli): the built CLI (`npm test`
 * builds dist/ first) run as `npx tenure` would, with an environment of the test's own.
 */

export const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function tenure(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, productNode([BIN, ...args]), { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * A scratch directory and an environment pointing tenure at storage of the test's own: on
 * PostgreSQL a database copied from the run's migrated template (dropped by `remove()`); on
 * embedded storage a DATA_DIR copied from the run's migrated one, so that the first command does
 * not pay for creating the database (`empty: true` leaves DATA_DIR absent, as on a first start).
 * `embedded: true` gives embedded storage whatever the tier's storage (a test about DATA_DIR itself).
 */
export async function scratch(prefix: string, options: { empty?: boolean; embedded?: boolean } = {}): Promise<{ dir: string; env: Record<string, string>; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `tenure-${prefix}-`));
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'silent' };
  const database = onPostgres && !options.embedded ? await createTestDatabase() : null;
  if (database?.storage.kind === 'postgres') env.DATABASE_URL = database.storage.url;
  else if (!options.empty) await seedDataDir(env.DATA_DIR!);
  return {
    dir,
    env,
    async remove() {
      await database?.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Makes `dataDir` a migrated embedded database (a copy of the run's), as after `tenure migrate`. */
export async function seedDataDir(dataDir: string): Promise<void> {
  await cp(inject('pgliteDataDir'), dataDir, { recursive: true });
}

/**
 * A project and a key made with the CLI, before any server holds the storage: in-process, both
 * commands on one opening of the storage `env` names (two spawned commands cost some 10
 * CPU-seconds; test/cli proves the bin as a process).
 */
export async function cliTenant(env: NodeJS.ProcessEnv): Promise<{ projectId: string; key: string }> {
  let opened: Container | undefined;
  const io: Omit<CliIo, 'stdout' | 'stderr'> = {
    env,
    openContainer: async (config) => {
      opened ??= await createContainer({ config, logger: createLogger('silent'), open: { lockWaitMs: 0 } });
      return { container: opened, release: async () => undefined };
    },
  };
  try {
    const project = await cli(['project', 'create', '--name', 'ops test'], io);
    expect(project.code, project.stderr).toBe(0);
    const projectId = (JSON.parse(project.stdout) as { id: string }).id;
    const key = await cli(['key', 'create', '--project', projectId], io);
    expect(key.code, key.stderr).toBe(0);
    return { projectId, key: (JSON.parse(key.stdout) as { key: string }).key };
  } finally {
    await opened?.close();
  }
}

/** Waits (bounded) until `predicate` holds, checking every 25 ms; no timing is asserted. */
export async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
