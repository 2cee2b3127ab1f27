import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { community, startFakeBotSubscription, type FakeBotSubscription } from '../support/fake-botsubscription.js';
import { createTestDatabase, type TestDatabase } from '../support/harness.js';
import { productNode } from '../support/processes.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * `npx tenure import botsubscription` as a process (the built CLI) on PostgreSQL, killed with
 * SIGKILL while it waits for a page of memberships (the fake holding its answer): what it wrote
 * stays, and the next run writes the rest and ends with the whole source in the project, each
 * membership once (docs/moving-in.md, "Running it again, and after an interruption").
 */

const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let fake: FakeBotSubscription;
let database: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  fake = await startFakeBotSubscription();
  database = await createTestDatabase();
  if (database.storage.kind !== 'postgres') throw new Error('the cluster tier runs on PostgreSQL');
  const { DATABASE_URL: _admin, ...rest } = process.env;
  env = { ...rest, DATABASE_URL: database.storage.url, LOG_LEVEL: 'warn', TENURE_DEMO_PROJECT: 'false', TENURE_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
});
afterAll(async () => {
  await fake.close();
  await database.drop();
});

async function withContainer<T>(work: (c: Container) => Promise<T>): Promise<T> {
  const c = await createContainer({ config: loadConfig(env), logger: createLogger('silent') });
  try {
    return await work(c);
  } finally {
    await c.close();
  }
}

function run(args: string[], key: string): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, productNode([BIN, ...args]), { env: { ...env, BOTSUBSCRIPTION_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

describe('import botsubscription killed mid-way', () => {
  it('keeps what it wrote, and the next run brings over the rest once', async () => {
    const source = fake.project(community(300));
    const projectId = await withContainer(async (c) => {
      const created = await c.services.projects.createProject('moving in');
      if (!created.ok) throw created.error;
      return created.value.id;
    });
    const count = () => withContainer(async (c) => (await c.services.memberships.list(projectId, { limit: 1, offset: 0 })).total);
    const args = ['import', 'botsubscription', '--project', projectId, '--source-project', source.id, '--base-url', fake.url];

    // Answered: the settings, the first page of each list, the second page of memberships; the
    // third is held, so the process is killed with 200 memberships written and 100 to go.
    fake.holdAfter(6);
    const first = run(args, source.key);
    await eventually(() => fake.held === 1, 'the third page of memberships asked for', 60_000);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.code, killed.stderr).toBeNull();
    fake.holdAfter(null);
    expect(await count()).toBe(200);

    const second = await run(args, source.key).done;
    expect(second.code, second.stderr).toBe(0);
    const report = JSON.parse(second.stdout) as { brought_over: Record<string, number>; already_there: Record<string, number> };
    expect(report.brought_over).toMatchObject({ membership: 100, plan: 0, target: 0 });
    expect(report.already_there).toMatchObject({ membership: 200, plan: 2, target: 3 });

    const memberships = await withContainer(async (c) => {
      const all = [];
      for (let offset = 0; offset < 300; offset += 100) all.push(...(await c.services.memberships.list(projectId, { limit: 100, offset })).items);
      return all.map((m) => `${m.user_id} ${m.plan_id} ${m.membership_end_date}`).sort();
    });
    expect(memberships).toEqual(source.memberships.map((m) => `${String(m.user_id)} ${String(m.plan_id)} ${String(m.membership_end_date)}`).sort());
  });
});
