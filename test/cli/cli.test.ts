import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tenure as runCli, seedDataDir } from '../ops/ops-support.js';

/**
 * The real binary (`npm test` builds dist/ first), run as a user would run `npx tenure`, on
 * embedded storage. Each test has a data directory of its own (embedded storage is one process at
 * a time), so the tests run side by side.
 */

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A migrated embedded database of the test's own, and the CLI pointed at it. */
async function site() {
  const dir = await mkdtemp(path.join(tmpdir(), 'tenure-cli-'));
  dirs.push(dir);
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  const env: NodeJS.ProcessEnv = { ...rest, DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'silent' };
  // A migrated embedded database (test/storage/cli.storage.test.ts runs `migrate` itself).
  await seedDataDir(env.DATA_DIR!);
  const tenure = (...args: string[]) => runCli(env, ...args);
  async function newProject(name = 'cli test'): Promise<string> {
    const res = await tenure('project', 'create', '--name', name);
    expect(res.code, res.stderr).toBe(0);
    return (JSON.parse(res.stdout) as { id: string }).id;
  }
  return { dir, env, tenure, newProject };
}

// Side by side, several commands share the machine: each test has longer than the default 30 s.
describe.concurrent('tenure CLI', { timeout: 90_000 }, () => {
  it('creates a project and prints it as JSON', async () => {
    const { tenure } = await site();
    const res = await tenure('project', 'create', '--name', 'Acme');
    expect(res.code, res.stderr).toBe(0);
    const project = JSON.parse(res.stdout);
    expect(project).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme', created_at: expect.any(String) });
  });

  it('creates a key showing the secret once and only its last four in the metadata', async () => {
    const { tenure, newProject } = await site();
    const projectId = await newProject();
    const res = await tenure('key', 'create', '--project', projectId, '--label', 'ci');
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { key: string; metadata: Record<string, unknown> };
    expect(out.key).toMatch(/^tk_live_[0-9A-Za-z]{40,44}$/);
    expect(out.metadata).toMatchObject({ label: 'ci', last_four: out.key.slice(-4), revoked_at: null });
    expect(JSON.stringify(out.metadata)).not.toContain(out.key);
  });

  it('refuses a key for an unknown project with a message and a non-zero exit', async () => {
    const { tenure } = await site();
    const res = await tenure('key', 'create', '--project', '00000000-0000-4000-8000-000000000000');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/Project not found/);
  });

  it('imports a CSV, reporting every rejected line without stopping', async () => {
    const { dir, tenure, newProject } = await site();
    const projectId = await newProject();
    const future = Date.now() + 30 * 86_400_000;
    const lines = [
      'user_id,end_date',
      `1001,${future}`,
      `1002,${new Date(future).toISOString()}`,
      `abc,${future}`,
      `1003,not-a-date`,
      `1001,${future}`,
      `1004,2027-02-30T00:00:00.000Z`,
      `1005,2001-01-01T00:00:00.000Z`,
      `1006`,
      `1007,${future}`,
    ];
    const file = path.join(dir, 'members.csv');
    await writeFile(file, lines.join('\n') + '\n');
    const res = await tenure('membership', 'import', '--project', projectId, '--file', file, '--batch-size', '2');
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ project_id: projectId, inserted: 4, rejected: 5 });
    expect(report.rejections.map((r: { line: number }) => r.line)).toEqual([4, 5, 6, 7, 9]);
    expect(report.rejections[2].reason).toMatch(/duplicate user_id \(first on line 2\)/);

    // A second import of the same file inserts nothing: everyone already has a membership.
    const again = JSON.parse((await tenure('membership', 'import', '--project', projectId, '--file', file)).stdout);
    expect(again.inserted).toBe(0);
    expect(again.rejections.filter((r: { reason: string }) => r.reason.includes('already has a membership'))).toHaveLength(4);
  });

  it('fails plainly for a missing file or an unknown project', async () => {
    const { dir, tenure, newProject } = await site();
    const projectId = await newProject();
    const missing = await tenure('membership', 'import', '--project', projectId, '--file', path.join(dir, 'nope.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Cannot read/);
    const file = path.join(dir, 'one.csv');
    await writeFile(file, `1,${Date.now() + 86_400_000}\n`);
    const unknown = await tenure('membership', 'import', '--project', 'x', '--file', file);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Project not found/);
  });

  it('names the variable of a bad configuration value', async () => {
    const { env } = await site();
    const res = await runCli({ ...env, PORT: 'eighty' }, 'migrate');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/PORT/);
  });
});
