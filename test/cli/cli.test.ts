import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOn } from '../support/cli.js';
import { useHarness } from '../support/harness.js';
import { tenure as spawnTenure, seedDataDir } from '../ops/ops-support.js';

/**
 * `npx tenure`: each command's output, messages and exit code in-process (`runCli` on the
 * harness's database), and the built binary run as a real process where the process is what is
 * proven: a success printing JSON with exit 0, a failure on stderr with a non-zero exit. Help
 * without storage: test/cli/help-and-progress.test.ts; storage-specific commands (migrate, a
 * data directory held by a server): test/storage/cli.storage.test.ts.
 */

const h = useHarness();
const tenure = (...args: string[]) => cliOn(h)(...args);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tenure-cli-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function newProject(name = 'cli test'): Promise<string> {
  const res = await tenure('project', 'create', '--name', name);
  expect(res.code, res.stderr).toBe(0);
  return (JSON.parse(res.stdout) as { id: string }).id;
}

describe('tenure CLI', () => {
  it('creates a project and prints it as JSON', async () => {
    const res = await tenure('project', 'create', '--name', 'Acme');
    expect(res.code, res.stderr).toBe(0);
    const project = JSON.parse(res.stdout);
    expect(project).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme', created_at: expect.any(String) });
  });

  it('creates a key showing the secret once and only its last four in the metadata', async () => {
    const projectId = await newProject();
    const res = await tenure('key', 'create', '--project', projectId, '--label', 'ci');
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { key: string; metadata: Record<string, unknown> };
    expect(out.key).toMatch(/^tk_live_[0-9A-Za-z]{40,44}$/);
    expect(out.metadata).toMatchObject({ label: 'ci', last_four: out.key.slice(-4), revoked_at: null });
    expect(JSON.stringify(out.metadata)).not.toContain(out.key);
  });

  it('refuses a key for an unknown project with a message and a non-zero exit', async () => {
    const res = await tenure('key', 'create', '--project', '00000000-0000-4000-8000-000000000000');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/Project not found/);
  });

  it('imports a CSV, reporting every rejected line without stopping', async () => {
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
    // Rows were rejected: exit 2, and the last line says so.
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr.trimEnd().split('\n').at(-1)).toBe('import: 9 data rows: 4 inserted, 5 rejected; exit code 2: rows were rejected (each listed with its line and reason)');
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ project_id: projectId, dry_run: false, rows: 9, inserted: 4, rejected: 5 });
    expect(report.rejections.map((r: { line: number }) => r.line)).toEqual([4, 5, 6, 7, 9]);
    expect(report.rejections[2].reason).toMatch(/duplicate user_id \(first on line 2\)/);

    // A second import of the same file inserts nothing: everyone already has a membership.
    const again = JSON.parse((await tenure('membership', 'import', '--project', projectId, '--file', file)).stdout);
    expect(again.inserted).toBe(0);
    expect(again.rejections.filter((r: { reason: string }) => r.reason.includes('already has a membership'))).toHaveLength(4);
  });

  it('fails plainly for a missing file or an unknown project', async () => {
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
    const res = await cliOn(h, { PORT: 'eighty' })('migrate');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/PORT/);
  });

  it('reads the configuration from the environment it is given, not this process', async () => {
    // The default opener (the configuration's storage): a bad value stops it before storage opens.
    const res = await cli(['migrate'], { env: { DATA_DIR: path.join(dir, 'never'), TENURE_SHUTDOWN_TIMEOUT_MS: 'soon' } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^tenure: .*TENURE_SHUTDOWN_TIMEOUT_MS/);
    await expect(access(path.join(dir, 'never'))).rejects.toThrow();
  });
});

/**
 * The built binary as `npx tenure` runs it (`npm test` builds dist/ first): argv, the environment,
 * stdout, stderr and the exit code of a real process. Each spawn costs some 5 CPU-seconds, so
 * these are few; the commands' behaviour is proven above.
 */
describe('the tenure bin, as a process', { timeout: 90_000 }, () => {
  const embedded = async (name: string): Promise<NodeJS.ProcessEnv> => {
    const { DATABASE_URL: _ignored, ...rest } = process.env;
    return { ...rest, DATA_DIR: path.join(dir, name), LOG_LEVEL: 'silent' };
  };

  it('prints a created project as JSON on stdout and exits 0, on its embedded storage', async () => {
    const env = await embedded('bin-data');
    await seedDataDir(env.DATA_DIR!);
    const res = await spawnTenure(env, 'project', 'create', '--name', 'Acme');
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme', created_at: expect.any(String) });
  });

  it('fails with one sentence on stderr naming the variable, nothing on stdout and exit 1', async () => {
    const res = await spawnTenure({ ...(await embedded('bin-bad')), PORT: 'eighty' }, 'migrate');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^tenure: .*PORT/);
  });
});
