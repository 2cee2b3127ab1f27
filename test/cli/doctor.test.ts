import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/database/db.js';
import { cli } from '../support/cli.js';
import { freePort, startRedis, type RedisProcess } from '../support/processes.js';
import { scratch, seedDataDir } from '../ops/ops-support.js';

/** How many migrations drizzle/ ships (a never-migrated database lacks them all). */
const migrationCount = () => (JSON.parse(readFileSync('drizzle/meta/_journal.json', 'utf8')) as { entries: unknown[] }).entries.length;

/**
 * `npx tenure doctor` as a user runs it, in-process (`runCli` with an environment of the test's
 * own; test/cli/cli.test.ts proves the bin as a process): each check printed with a fix in plain
 * words, exit 1 when any failed, and nothing changed. Doctor opens the storage its configuration
 * names, so the tests that reach the database have an embedded data directory of their own.
 */

let dir: Awaited<ReturnType<typeof scratch>>;
beforeAll(async () => {
  // Embedded storage whatever the tier's: the checks of a data directory are what is proven here.
  dir = await scratch('doctor', { embedded: true });
});
afterAll(() => dir.remove());

interface Finding {
  name: string;
  status: string;
  detail: string;
  fix?: string;
}

const doctor = (env: Record<string, string>) => cli(['doctor'], { env });

async function doctorJson(env: Record<string, string>): Promise<{ code: number; ok: boolean; checks: Record<string, Finding> }> {
  const res = await doctor(env);
  const out = JSON.parse(res.stdout) as { ok: boolean; checks: Finding[] };
  expect(out.checks.map((c) => c.name)).toEqual(['configuration', 'database', 'migrations', 'redis']);
  return { code: res.code, ok: out.ok, checks: Object.fromEntries(out.checks.map((c) => [c.name, c])) };
}

/** Embedded storage in a directory of its own. */
const embedded = (name: string) => ({ ...dir.env, DATA_DIR: path.join(dir.dir, name) });

/** A migrated embedded database of the test's own. */
async function migrated(name: string): Promise<Record<string, string>> {
  const env = embedded(name);
  await seedDataDir(env.DATA_DIR);
  return env;
}

describe('tenure doctor', () => {
  it('passes on a migrated database and prints a report for people on stderr, JSON on stdout', async () => {
    // scratch() gives this suite a migrated database of its own.
    const res = await doctor(dir.env);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true });
    const report = res.stderr;
    expect(report).toMatch(/^tenure doctor\n/);
    expect(report).toMatch(/ok {4}configuration {2}.*rate limits in memory/);
    expect(report).toMatch(/ok {4}database {7}reachable \(PGlite/);
    expect(report).toMatch(/ok {4}migrations {5}all applied/);
    expect(report).toMatch(/skip {2}redis {10}REDIS_URL not set/);
    expect(report).toMatch(/Everything tenure needs is in place\.\n$/);
  });

  it('names a bad variable and skips the rest', async () => {
    const { code, ok, checks } = await doctorJson({ ...dir.env, PORT: 'eighty' });
    expect(code).toBe(1);
    expect(ok).toBe(false);
    expect(checks.configuration).toMatchObject({ status: 'fail', detail: expect.stringMatching(/PORT must be a whole number/), fix: expect.stringMatching(/PORT/) });
    expect(checks.database!.status).toBe('skipped');
  });

  it('says nothing listens at the database address, and how to fix it, without printing the password', async () => {
    const url = `postgres://tenure:s3cret-pw@127.0.0.1:${await freePort()}/tenure`;
    const res = await doctor({ ...dir.env, DATABASE_URL: url });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: false });
    const report = res.stderr;
    expect(report).toMatch(/FAIL {2}database {7}unreachable at 127\.0\.0\.1:\d+\/tenure/);
    expect(report).toMatch(/fix: Nothing accepts connections at 127\.0\.0\.1:\d+\/tenure\. Start PostgreSQL, or correct the host and port in DATABASE_URL\./);
    expect(report).toMatch(/skip {2}migrations {5}not checked/);
    expect(report).toMatch(/1 check failed\.\n$/);
    expect(res.stdout + res.stderr).not.toContain('s3cret-pw');
  });

  it('lists pending migrations on a database never migrated', async () => {
    const env = embedded('unmigrated');
    // A database nothing was applied to: a copy of the migrated one without what the migrations
    // made (both schemas), which is cheaper than creating an empty one (an initdb) here.
    await seedDataDir(env.DATA_DIR);
    const pg = await PGlite.create(path.join(env.DATA_DIR, 'pglite'));
    await pg.exec('DROP SCHEMA drizzle CASCADE; DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
    await pg.close();
    const { code, checks } = await doctorJson(env);
    expect(code).toBe(1);
    expect(checks.database!.status).toBe('ok');
    expect(checks.migrations).toMatchObject({ status: 'fail', detail: expect.stringMatching(new RegExp(`^${migrationCount()} pending: 0000_init, `)), fix: expect.stringMatching(/npx tenure migrate/) });
    // Doctor applied nothing.
    expect((await doctorJson(env)).checks.migrations!.status).toBe('fail');
  });

  it('warns, without failing, before the first start of embedded storage; creates nothing', async () => {
    const env = embedded('fresh');
    const { code, checks } = await doctorJson(env);
    expect(code).toBe(0);
    expect(checks.database).toMatchObject({ status: 'warn', detail: expect.stringMatching(/no database in .* yet/) });
    expect(checks.migrations!.status).toBe('warn');
  });

  it('says when a running server holds the embedded data directory', async () => {
    // The data directory held as a running server holds it: opened, its lock file taken. That the
    // lock keeps out another process is proven against a real server process in
    // test/storage/cli.storage.test.ts; here it is doctor's reading of a held lock.
    // Nothing listens at its PORT: doctor finds no server to ask (test/storage/cli.storage.test.ts asks a real one).
    const env: Record<string, string> = { ...(await migrated('held')), PORT: String(await freePort()) };
    const server = await openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR! }, { lockWaitMs: 0 });
    try {
      const { code, checks } = await doctorJson(env);
      expect(code).toBe(1);
      expect(checks.database).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/held by another tenure process/),
        fix: expect.stringMatching(/Stop that process/),
      });
    } finally {
      await server.close();
    }
  });

  describe('with REDIS_URL', () => {
    let redis: RedisProcess;
    beforeAll(async () => {
      redis = await startRedis(await freePort());
    });
    afterAll(() => redis?.stop());

    it('checks Redis is reachable', async () => {
      const { code, checks } = await doctorJson({ ...(await migrated('redis-up')), REDIS_URL: redis.url });
      expect(code).toBe(0);
      expect(checks.redis).toMatchObject({ status: 'ok', detail: `reachable at 127.0.0.1:${redis.port}` });
    });

    it('fails plainly when Redis is not there', async () => {
      const port = await freePort();
      const { code, checks } = await doctorJson({ ...(await migrated('redis-down')), REDIS_URL: `redis://:pw-9876@127.0.0.1:${port}` });
      expect(code).toBe(1);
      expect(checks.redis).toMatchObject({ status: 'fail', fix: expect.stringMatching(/Start Redis, or correct REDIS_URL/) });
      expect(JSON.stringify(checks)).not.toContain('pw-9876');
    });
  });
});
