import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratch, tenure } from '../ops/ops-support.js';

/** `npx tenure --help`, per-command help, and import progress on stderr, through the built binary. */

let dir: Awaited<ReturnType<typeof scratch>>;
beforeAll(async () => {
  dir = await scratch('help');
});
afterAll(() => dir.remove());

// Help opens no storage: the commands run side by side.
describe.concurrent('help', { timeout: 90_000 }, () => {
  it('--help lists every command with a description, examples and where to read more', async () => {
    const res = await tenure(dir.env, '--help');
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
    const res = await tenure(dir.env, ...args);
    expect(res.code, res.stderr).toBe(0);
    for (const text of expected) expect(res.stdout).toContain(text);
  });

  it('an unknown command fails with a suggestion and a pointer to the help', async () => {
    const res = await tenure(dir.env, 'doctr');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/unknown command 'doctr'/);
    expect(res.stderr).toMatch(/Did you mean doctor\?/);
    expect(res.stderr).toMatch(/npx tenure --help/);
  });
});

describe('membership import progress', () => {
  let projectId: string;
  let file: string;
  beforeAll(async () => {
    const project = await tenure(dir.env, 'project', 'create', '--name', 'progress');
    expect(project.code, project.stderr).toBe(0);
    projectId = (JSON.parse(project.stdout) as { id: string }).id;
    const end = Date.now() + 30 * 86_400_000;
    const rows = Array.from({ length: 3000 }, (_, i) => `${10_000 + i},${end}`);
    file = path.join(dir.dir, 'members.csv');
    await writeFile(file, ['user_id,end_date', ...rows, 'oops,1'].join('\n') + '\n');
  });

  it('--progress reports on stderr while stdout holds the JSON report alone', async () => {
    const res = await tenure(dir.env, 'membership', 'import', '--project', projectId, '--file', file, '--batch-size', '500', '--progress');
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ project_id: projectId, inserted: 3000, rejected: 1 });
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^import: 3,00[12] rows read, 3,000 inserted, [\d,]+ rows\/s, 100% of \d+\.\d KiB, done in \d+s$/);
    for (const line of lines) expect(line).toMatch(/^import: [\d,]+ rows read, [\d,]+ inserted, [\d,]+ rows\/s, \d+% of .*, (ETA|done in) /);
  });

  it('prints no progress when stderr is not a terminal, unless asked', async () => {
    const again = await tenure(dir.env, 'membership', 'import', '--project', projectId, '--file', file);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(JSON.parse(again.stdout)).toMatchObject({ inserted: 0 });
  });
});
