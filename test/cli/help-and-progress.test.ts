import { readFileSync } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOn } from '../support/cli.js';
import { useHarness } from '../support/harness.js';
import { tenure as spawnTenure } from '../ops/ops-support.js';

/**
 * `npx tenure --help`, per-command help, and import progress on stderr, in-process (`runCli`);
 * and `--help` through the built binary, which answers without opening storage.
 */

const h = useHarness();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tenure-help-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Help needs no storage: an environment pointing at a data directory that does not exist. */
const tenure = (...args: string[]) => cli(args, { env: { DATA_DIR: path.join(dir, 'none'), LOG_LEVEL: 'silent' } });

describe('help', () => {
  it('--help lists every command with a description, examples and where to read more', async () => {
    const res = await tenure('--help');
    expect(res.code).toBe(0);
    for (const command of ['project', 'key', 'migrate', 'serve', 'worker', 'membership', 'doctor']) {
      expect(res.stdout).toMatch(new RegExp(`^  ${command}\\b.* {2,}\\S`, 'm'));
    }
    expect(res.stdout).toContain('Examples:\n  $ npx tenure doctor');
    expect(res.stdout).toContain('docs/operations.md');
  });

  it.each([
    [['membership', 'import', '--help'], ['--project <id>', '--file <path>', '--progress', 'rows/s', '$ npx tenure membership import']],
    [['help', 'doctor'], ['JSON document on stdout', 'exit code', '$ npx tenure doctor']],
    [['key', 'help', 'create'], ['--project <id>', '--label <label>', 'printed once', '$ npx tenure key create']],
    [['serve', '--help'], ['TENURE_SHUTDOWN_TIMEOUT_MS', '$ npx tenure serve']],
  ])('%j explains the command with examples', async (args, expected) => {
    const res = await tenure(...args);
    expect(res.code, res.stderr).toBe(0);
    for (const text of expected) expect(res.stdout).toContain(text);
  });

  it.each([['--version'], ['-V']])('%s prints the version of package.json and nothing else', async (flag) => {
    const res = await tenure(flag);
    expect(res.code, res.stderr).toBe(0);
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(res.stdout).toBe(`${version}\n`);
  });

  it('an unknown command fails with a suggestion and a pointer to the help', async () => {
    const res = await tenure('doctr');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/unknown command 'doctr'/);
    expect(res.stderr).toMatch(/Did you mean doctor\?/);
    expect(res.stderr).toMatch(/npx tenure --help/);
  });

  it('the built binary answers --help as a process, without opening storage', { timeout: 60_000 }, async () => {
    const dataDir = path.join(dir, 'bin-none');
    const { DATABASE_URL: _ignored, ...rest } = process.env;
    const res = await spawnTenure({ ...rest, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, '--help');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Usage: tenure /);
    expect(res.stdout).toContain('Examples:\n  $ npx tenure doctor');
    // Opening embedded storage would have created the data directory.
    await expect(access(dataDir)).rejects.toThrow();
  });
});

describe('membership import progress', () => {
  let projectId: string;
  let file: string;
  beforeAll(async () => {
    const project = await cliOn(h)('project', 'create', '--name', 'progress');
    expect(project.code, project.stderr).toBe(0);
    projectId = (JSON.parse(project.stdout) as { id: string }).id;
    const end = Date.now() + 30 * 86_400_000;
    const rows = Array.from({ length: 3000 }, (_, i) => `${10_000 + i},${end}`);
    file = path.join(dir, 'members.csv');
    await writeFile(file, ['user_id,end_date', ...rows, 'oops,1'].join('\n') + '\n');
  });

  it('--progress reports on stderr while stdout holds the JSON report alone', async () => {
    const res = await cliOn(h)('membership', 'import', '--project', projectId, '--file', file, '--batch-size', '500', '--progress');
    expect(res.code, res.stderr).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ project_id: projectId, inserted: 3000, rejected: 1 });
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines.pop()).toMatch(/^import: 3,001 data rows: 3,000 inserted, 1 rejected; exit code 2/);
    // The header is not a row; the one rejected row is said beside the 100%.
    expect(lines.at(-1)).toMatch(/^import: 3,001 rows read, 3,000 inserted, [\d,]+ rows\/s, 100% of \d+\.\d KiB, 1 rejected, done in \d+s$/);
    for (const line of lines) expect(line).toMatch(/^import: [\d,]+ rows read, [\d,]+ inserted, [\d,]+ rows\/s, \d+% of .*, (ETA|1 rejected, done in) /);
  });

  it('prints no progress when stderr is not a terminal, unless asked', async () => {
    const again = await cliOn(h)('membership', 'import', '--project', projectId, '--file', file);
    // Every row is already a member now: all rejected. No progress, only the summary line.
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toMatch(/^import: 3,001 data rows: 0 inserted, 3,001 rejected; exit code 2[^\n]*\n$/);
    expect(JSON.parse(again.stdout)).toMatchObject({ inserted: 0 });
  });
});
