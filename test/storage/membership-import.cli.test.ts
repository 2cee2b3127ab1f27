import { randomInt } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { cliOn } from '../support/cli.js';
import { eventRows, membershipRows } from '../support/api.js';
import { future, onPostgres, useHarness } from '../support/harness.js';

/**
 * `npx tenure membership import` through the CLI's entry point (`runCli`, in-process, on this
 * file's database), on each storage: every data row of a file is inserted or rejected with its
 * line and reason, a broken CSV line costs that line alone, a header saved with a BOM is a header,
 * a dry run keeps nothing, `--rejects` writes the rejected rows, and the exit code says whether
 * any row was rejected (docs/configuration.md, "Importing memberships").
 */

const h = useHarness();
const tenure = cliOn(h);
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tenure-import-cli-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function file(name: string, text: string): Promise<string> {
  const f = path.join(dir, name);
  await writeFile(f, text);
  return f;
}

const lastLine = (stderr: string) => stderr.trimEnd().split('\n').at(-1);

describe(`membership import, the CLI on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`, { timeout: 120_000 }, () => {
  it('rejects the line of an unclosed quote alone: of 10,000 rows, the other 9,999 are inserted', async () => {
    const t = await h.tenant();
    const end = future(30).ms;
    const lines = ['user_id,end_date', ...Array.from({ length: 10_000 }, (_, i) => `${20_000_000 + i},${end}`)];
    // Line 708 (the header is line 1) opens a quote it never closes.
    lines[707] = `"${20_000_000 + 706},${end}`;
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', await file('quote.csv', lines.join('\n') + '\n'), '--batch-size', '3000');
    expect(res.code, res.stderr).toBe(2);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ rows: 10_000, inserted: 9_999, rejected: 1, dry_run: false });
    expect(report.rejections).toHaveLength(1);
    expect(report.rejections[0]).toMatchObject({ line: 708, user_id: null, text: lines[707] });
    expect(report.rejections[0].reason).toMatch(/^unreadable CSV: unclosed quote/);
    expect(lastLine(res.stderr)).toBe('import: 10,000 data rows: 9,999 inserted, 1 rejected; exit code 2: rows were rejected (each listed with its line and reason)');
    const rows = await membershipRows(h, t.projectId);
    expect(rows).toHaveLength(9_999);
    expect(rows.some((m) => m.user_id === String(20_000_000 + 706))).toBe(false);
    expect(rows.some((m) => m.user_id === String(20_000_000 + 9_999))).toBe(true);
  });

  it('reads a header saved with a UTF-8 BOM as the header, counts data rows only, and exits 0 when all are inserted', async () => {
    const t = await h.tenant();
    const { ms, iso } = future(10);
    const f = await file('bom.csv', `\uFEFFuser_id,end_date\r\n30000001,${ms}\r\n\r\n30000002,${iso}\r\n`);
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', f);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ rows: 2, inserted: 2, rejected: 0, rejections: [] });
    expect(lastLine(res.stderr)).toBe('import: 2 data rows: 2 inserted, 0 rejected; every row was imported');
    expect((await membershipRows(h, t.projectId)).map((m) => m.user_id).sort()).toStrictEqual(['30000001', '30000002']);
  });

  it('--dry-run reports what the import would do and writes nothing', async () => {
    const t = await h.tenant();
    const { ms } = future(10);
    const member = await tenure('membership', 'import', '--project', t.projectId, '--file', await file('member.csv', `40000001,${ms}\n`));
    expect(member.code, member.stderr).toBe(0);
    const before = await eventRows(h, t.projectId);
    const f = await file('dry.csv', ['user_id,end_date', `40000001,${ms}`, `40000002,${ms}`, `40000003,${ms}`, `x,${ms}`].join('\n'));
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', f, '--dry-run', '--batch-size', '2');
    expect(res.code, res.stderr).toBe(2);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ dry_run: true, rows: 4, inserted: 2, rejected: 2 });
    expect(report.rejections.map((r: { line: number }) => r.line)).toStrictEqual([2, 5]);
    expect(lastLine(res.stderr)).toMatch(/^import: 4 data rows: 2 would be inserted \(dry run: nothing was written\), 2 rejected; exit code 2/);
    expect((await membershipRows(h, t.projectId)).map((m) => m.user_id)).toStrictEqual(['40000001']);
    expect(await eventRows(h, t.projectId)).toStrictEqual(before);
  });

  it('--rejects writes each rejected row as it was, with its line and reason, as CSV', async () => {
    const t = await h.tenant();
    const { ms } = future(10);
    const lines = ['user_id,end_date', `50000001,${ms}`, `abc,${ms}`, `50000002,"not, a date"`, `50000001,${ms}`, `"50000003,${ms}`, `50000004,${ms}`];
    const rejects = path.join(dir, 'rejects.csv');
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', await file('rejects-in.csv', lines.join('\n')), '--rejects', rejects);
    expect(res.code, res.stderr).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ rows: 6, inserted: 2, rejected: 4 });
    expect((await readFile(rejects, 'utf8')).split('\n')).toStrictEqual([
      'line,reason,row',
      `3,user_id must be a string of digits,"abc,${ms}"`,
      `4,end_date must be a 13-digit Unix timestamp in milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ,"50000002,""not, a date"""`,
      `5,duplicate user_id (first on line 2),"50000001,${ms}"`,
      `6,unreadable CSV: unclosed quote (opened at column 1; a quoted field must end on its line),"""50000003,${ms}"`,
      '',
    ]);
  });

  it('plan_id: an imported member on a plan gets the access rows an API-created one gets; an unknown plan is a rejected row', async () => {
    const t = await h.tenant();
    // A connected bot (an integration row as the connection route writes it; nothing calls Discord here).
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name)
      VALUES (${t.projectId}, 'discord', 'v1.dummy.sealed', ${String(randomInt(1, 2 ** 47))}, 'tenure-bot')`);
    const guild = await createTarget(t, { kind: 'guild', target_name: 'Server' });
    const role = await createTarget(t, { kind: 'role', parent_target_id: guild.target_id });
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, role.target_id);
    const { ms } = future(10);
    const elsewhere = '00000000-0000-4000-8000-0000000000aa';
    const lines = ['user_id,end_date,plan_id', `70000001,${ms},${plan.plan_id}`, `70000002,${ms},`, `70000003,${ms},${elsewhere}`, `70000004,${ms},not-a-plan`];
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', await file('plans.csv', lines.join('\n')));
    expect(res.code, res.stderr).toBe(2);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ rows: 4, inserted: 2, rejected: 2 });
    expect(report.rejections.map((r: { line: number; reason: string }) => [r.line, r.reason])).toStrictEqual([
      [4, 'plan_id names no plan of this project'],
      [5, 'plan_id must be a plan id (a UUID) or empty'],
    ]);
    const members = rowsOf<{ user_id: string; plan_id: string | null }>(
      await h.database.db.execute(sql`SELECT user_id, plan_id::text FROM memberships WHERE project_id = ${t.projectId} ORDER BY user_id`),
    );
    expect(members.map((m) => [m.user_id, m.plan_id])).toStrictEqual([
      ['70000001', plan.plan_id],
      ['70000002', null],
    ]);
    const created = (await eventRows(h, t.projectId)).filter((e) => e.type === 'membership.created');
    const onPlan = created.map((e) => e.data.membership as { user_id: string; plan_id: string | null; plan_name: string | null }).find((m) => m.user_id === '70000001');
    expect(onPlan).toMatchObject({ plan_id: plan.plan_id, plan_name: plan.plan_name });
    // The access planner plans the imported events as any others.
    const planner = h.container.stores.accessPlan;
    while ((await planner.planBatch(500)).events === 500);
    const access = rowsOf<{ user_id: string; target_id: string; desired: string }>(
      await h.database.db.execute(sql`SELECT user_id, target_id::text, desired FROM access WHERE project_id = ${t.projectId}`),
    );
    expect(access).toStrictEqual([{ user_id: '70000001', target_id: role.target_id, desired: 'granted' }]);
  });

  it('user_name and start_date columns, in any order: read and stored; a start after the end rejects its row, in --rejects too', async () => {
    const t = await h.tenant();
    const { iso } = future(10);
    const lines = ['user_name,end_date,start_date,user_id', `"Lovelace, Ada",${iso},2025-12-10T09:00:00.000Z,80000001`, `,${iso},${future(11).iso},80000002`, `Bob,${iso},,80000003`];
    const rejects = path.join(dir, 'names-rejects.csv');
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', await file('names.csv', lines.join('\n')), '--rejects', rejects);
    expect(res.code, res.stderr).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ rows: 3, inserted: 2, rejected: 1, rejections: [{ line: 3, user_id: '80000002', reason: 'start_date must not be after end_date' }] });
    expect((await readFile(rejects, 'utf8')).split('\n')[1]).toBe(`3,start_date must not be after end_date,"${lines[2]}"`);
    const members = rowsOf<{ user_id: string; first_name: string | null; start_date: string }>(
      await h.database.db.execute(sql`
        SELECT m.user_id, u.first_name, to_char(m.start_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS start_date
        FROM memberships m JOIN users u USING (project_id, user_id) WHERE m.project_id = ${t.projectId} ORDER BY m.user_id`),
    );
    expect(members.map((m) => [m.user_id, m.first_name])).toStrictEqual([
      ['80000001', 'Lovelace, Ada'],
      ['80000003', 'Bob'],
    ]);
    expect(members[0]!.start_date).toBe('2025-12-10T09:00');
  });

  it('refuses a header naming a column it does not know, writing nothing', async () => {
    const t = await h.tenant();
    const res = await tenure('membership', 'import', '--project', t.projectId, '--file', await file('cols.csv', `user_id,end_date,colour\n60000001,${future(3).ms},red\n`));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/unknown column "colour"/);
    expect(await membershipRows(h, t.projectId)).toStrictEqual([]);
  });
});
