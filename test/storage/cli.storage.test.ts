import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDataDir } from '../ops/ops-support.js';
import { cli } from '../support/cli.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/harness.js';
import { productNode } from '../support/processes.js';

/**
 * The CLI where the storage makes the difference (test/cli has the rest, on the harness's
 * database): `tenure migrate` on each, and a command run beside a running server — refused
 * plainly on embedded storage, whose data directory one process holds at a time, and shared on
 * PostgreSQL. The commands run in-process (`runCli`), opening the storage their environment names
 * as the bin does; the server is a real process, since what is proven is a lock between processes.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

let dir: string;
let env: NodeJS.ProcessEnv;
let database: TestDatabase | null = null;

const tenure = (...args: string[]) => cli(args, { env });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tenure-cli-storage-'));
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  env = { ...rest, DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'silent' };
  if (onPostgres) {
    database = await createTestDatabase();
    if (database.storage.kind !== 'postgres') throw new Error('expected a PostgreSQL database');
    env.DATABASE_URL = database.storage.url;
  } else {
    // As after a first start: every command migrates on opening, so `migrate` finds it done.
    await seedDataDir(env.DATA_DIR!);
  }
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

// The two tests use storage of their own (the server's data directory is another): side by side.
describe.concurrent(`tenure CLI on ${onPostgres ? 'PostgreSQL' : 'embedded storage'}`, { timeout: 90_000 }, () => {
  it('migrates idempotently', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await tenure('migrate');
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toEqual({ migrated: true, storage: onPostgres ? 'postgres' : 'pglite' });
    }
  });

  // Embedded storage: one process at a time, refused plainly. PostgreSQL: shared, so it works.
  it(onPostgres ? 'works beside a running server on PostgreSQL' : 'says plainly, at once, when a running server holds the embedded data directory', async () => {
    const serverEnv = { ...env, DATA_DIR: path.join(dir, 'held'), PORT: '0', TENURE_DEMO_PROJECT: 'false', LOG_LEVEL: 'info' };
    if (!onPostgres) await seedDataDir(serverEnv.DATA_DIR);
    const server: ChildProcess = spawn(process.execPath, productNode([MAIN]), { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        server.stdout!.on('data', (chunk: Buffer) => {
          const listening = /Server listening at http:\/\/[^:]+:(\d+)/.exec(chunk.toString());
          if (listening) resolve(listening[1]!);
        });
        server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
      });
      const res = await cli(['project', 'create', '--name', 'blocked'], { env: serverEnv });
      if (onPostgres) {
        expect(res.code, res.stderr).toBe(0);
        expect(JSON.parse(res.stdout)).toMatchObject({ name: 'blocked' });
      } else {
        expect(res.code).toBe(1);
        expect(res.stdout).toBe('');
        expect(res.stderr).toMatch(/in use by another tenure process/);
        // Doctor cannot open it either, so it asks the server holding it (its /readyz) instead of failing.
        const doctor = await cli(['doctor'], { env: { ...serverEnv, PORT: port } });
        expect(doctor.code, doctor.stderr).toBe(0);
        const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
        expect(checks.find((c) => c.name === 'database')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/held by the server at http:\/\/127\.0\.0\.1:\d+\/readyz/) });
        expect(checks.find((c) => c.name === 'migrations')).toMatchObject({ status: 'ok' });
      }
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  });
});
