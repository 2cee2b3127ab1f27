/**
 * CSV import benchmark: rows per second of `npx tenure membership import` on PostgreSQL.
 *
 *   npm run build && npx tsx bench/import.ts      # 1,000,000 rows; BENCH_IMPORT_ROWS to change
 *
 * A CSV of `user_id,end_date` rows (a header, end dates half past, half future, in both accepted
 * forms, a few bad lines) is written to a temp file, then imported through `importMemberships`
 * with the container's import store: the code path of the CLI, minus process start-up. The
 * database is its own, created from BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test)
 * and dropped afterwards. Every membership gets its `membership.created` event (the fan-out trigger
 * runs; the project has no webhook, so it creates no delivery). When the old per-batch statement
 * (`MembershipsStore.importBatch`, 5,000 rows per statement) still exists, it is measured on
 * 100,000 rows beside it. Target: ≥ 50,000 rows/s. The section of bench/RESULTS.md between
 * `<!-- import:begin -->` and `<!-- import:end -->` is rewritten; the rest is left alone.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'csv-parse';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import { importMemberships } from '../src/domain/memberships/membership-import.js';
import { createLogger } from '../src/logger.js';
import { rowsOf } from '../src/store/db.js';
import { adminQuery } from './lib/admin.js';
import { measuredCommit } from './lib/report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET = 50_000;
const LEGACY_ROWS = 100_000;

export interface ImportBenchOptions {
  quick: boolean;
  adminUrl: string;
  log: (line: string) => void;
}

export interface ImportBenchResult {
  markdown: string;
  ratios: { name: string; value: number; target: string; met: boolean }[];
}

/** `rows` good rows from user id `first` on, plus a header and every 100,000th line a bad one. */
async function writeCsv(file: string, rows: number, first: number): Promise<{ bad: number }> {
  const out = createWriteStream(file);
  const now = Date.now();
  let bad = 0;
  let buffer = 'user_id,end_date\n';
  for (let i = 0; i < rows; i++) {
    const end = now + ((i % 2 === 0 ? 30 : -30) * 86_400_000 + (i % 86_400) * 1000);
    buffer += `${first + i},${i % 4 < 2 ? end : new Date(end).toISOString()}\n`;
    if (i % 100_000 === 99_999) {
      buffer += `not-a-user,${end}\n`;
      bad++;
    }
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
  return { bad };
}

/** CPU seconds (user + system) of this process: parsing and validation run here, the database does not. */
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function project(container: Container, name: string): Promise<string> {
  const created = await container.services.projects.createProject(name);
  if (!created.ok) throw created.error;
  return created.value.id;
}

async function counts(container: Container, projectId: string): Promise<{ memberships: number; events: number; users: number }> {
  const [row] = rowsOf<{ memberships: number; events: number; users: number }>(
    await container.database.db.execute(sql`
      SELECT (SELECT count(*)::int FROM memberships WHERE project_id = ${projectId}) AS memberships,
             (SELECT count(*)::int FROM events WHERE project_id = ${projectId} AND type = 'membership.created') AS events,
             (SELECT count(*)::int FROM users WHERE project_id = ${projectId}) AS users`),
  );
  return row!;
}

type LegacyBatch = (projectId: string, rows: { userId: string; endDate: Date }[]) => Promise<Set<string>>;

/** The old path: csv-parse, then one `importBatch` statement per 5,000 rows, one at a time. */
async function legacyImport(batch: LegacyBatch, projectId: string, file: string): Promise<number> {
  let rows: { userId: string; endDate: Date }[] = [];
  let inserted = 0;
  for await (const record of createReadStream(file).pipe(parse({ trim: true, relax_column_count: true })) as AsyncIterable<string[]>) {
    const [userId = '', end = ''] = record;
    if (!/^\d+$/.test(userId)) continue;
    rows.push({ userId, endDate: new Date(/^\d{13}$/.test(end) ? Number(end) : end) });
    if (rows.length === 5_000) {
      inserted += (await batch(projectId, rows)).size;
      rows = [];
    }
  }
  if (rows.length > 0) inserted += (await batch(projectId, rows)).size;
  return inserted;
}

export async function runImportBench(options: ImportBenchOptions): Promise<ImportBenchResult> {
  const { log } = options;
  const rows = Number(process.env.BENCH_IMPORT_ROWS ?? (options.quick ? 200_000 : 1_000_000));
  const name = `tenure_bench_import_${randomBytes(4).toString('hex')}`;
  const url = new URL(options.adminUrl);
  url.pathname = `/${name}`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tenure-bench-import-'));
  await adminQuery(options.adminUrl, `CREATE DATABASE ${name}`);
  let container: Container | null = null;
  try {
    const config = loadConfig({ DATABASE_URL: url.toString() });
    container = await createContainer({ config, logger: createLogger('silent') });
    const file = path.join(dir, 'members.csv');
    const { bad } = await writeCsv(file, rows, 1_000_000_000);
    log(`import: ${rows.toLocaleString('en-US')} rows written to a CSV; importing on PostgreSQL`);

    const projectId = await project(container, 'import bench');
    const cpu0 = cpuSeconds();
    const t0 = performance.now();
    const report = await importMemberships(container.stores.membershipImport, projectId, createReadStream(file));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds() - cpu0;
    const rate = rows / seconds;
    const stored = await counts(container, projectId);
    if (report.inserted !== rows || report.rejected !== bad || stored.memberships !== rows || stored.events !== rows || stored.users !== rows) {
      throw new Error(`import bench: expected ${rows} memberships, events and users and ${bad} rejections, got ${JSON.stringify({ report: { inserted: report.inserted, rejected: report.rejected }, stored })}`);
    }
    log(`import: ${rows} rows in ${seconds.toFixed(1)} s = ${Math.round(rate)} rows/s (node CPU ${cpu.toFixed(1)} s)`);

    let legacy: { rows: number; rate: number } | null = null;
    const importBatch = (container.stores.memberships as unknown as { importBatch?: LegacyBatch }).importBatch;
    if (importBatch && !options.quick) {
      const legacyFile = path.join(dir, 'legacy.csv');
      await writeCsv(legacyFile, LEGACY_ROWS, 2_000_000_000);
      const legacyProject = await project(container, 'import bench, old path');
      const l0 = performance.now();
      const inserted = await legacyImport(importBatch.bind(container.stores.memberships), legacyProject, legacyFile);
      const legacySeconds = (performance.now() - l0) / 1000;
      if (inserted !== LEGACY_ROWS) throw new Error(`old path inserted ${inserted} of ${LEGACY_ROWS}`);
      legacy = { rows: LEGACY_ROWS, rate: LEGACY_ROWS / legacySeconds };
      log(`import: old path ${LEGACY_ROWS} rows = ${Math.round(legacy.rate)} rows/s`);
    }

    const ratio = rate / TARGET;
    const met = ratio >= 1;
    const markdown = [
      '## Import: `npx tenure membership import` (PostgreSQL)',
      '',
      `${rows.toLocaleString('en-US')} CSV rows (plus a header and ${bad} bad lines), imported through \`importMemberships\` and the`,
      "container's import store (the CLI's code path, without process start-up): chunks of 20,000 rows, each one",
      'transaction of COPY FROM STDIN into a temp staging table and one INSERT … SELECT writing the memberships,',
      'their users and one `membership.created` event each (fan-out trigger included; the project has no webhook).',
      '',
      '| path | rows | seconds | rows/s | node CPU s | target |',
      '|---|---:|---:|---:|---:|---|',
      `| COPY + chunked INSERT … SELECT, 2 chunks in flight | ${rows.toLocaleString('en-US')} | ${seconds.toFixed(1)} | **${Math.round(rate).toLocaleString('en-US')}** | ${cpu.toFixed(1)} | ≥ ${TARGET.toLocaleString('en-US')}: ${met ? '**met**' : '**missed**'} |`,
      ...(legacy
        ? [`| old: unnest batches of 5,000, one at a time (\`importBatch\`) | ${legacy.rows.toLocaleString('en-US')} | ${(legacy.rows / legacy.rate).toFixed(1)} | ${Math.round(legacy.rate).toLocaleString('en-US')} | — | — |`]
        : []),
      '',
      `Import rate ÷ target: ${ratio.toFixed(2)}×.`,
      '',
    ].join('\n');
    return { markdown, ratios: [{ name: 'import rows/s ÷ 50,000 (PostgreSQL)', value: ratio, target: '≥ 1.0', met }] };
  } finally {
    await container?.close();
    await adminQuery(options.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

async function main() {
  const began = Date.now();
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const result = await runImportBench({ quick: false, adminUrl, log: (line) => console.log(line) });
  const section = [
    '<!-- import:begin (written by `npx tsx bench/import.ts`) -->',
    result.markdown.trimEnd(),
    '',
    `Command: \`npx tsx bench/import.ts\` (after \`npm run build\`) · commit: ${measuredCommit()} · date: ${new Date().toISOString()} · whole run: ${Math.round((Date.now() - began) / 1000)} s · nproc ${os.cpus().length}, node ${process.version}`,
    'The machine is shared and noisy: numbers vary from run to run.',
    '<!-- import:end -->',
  ].join('\n');
  const file = path.join(ROOT, 'bench/RESULTS.md');
  const current = await readFile(file, 'utf8').catch(() => '');
  const marked = /<!-- import:begin[\s\S]*?<!-- import:end -->/;
  await writeFile(file, marked.test(current) ? current.replace(marked, () => section) : `${current.trimEnd()}\n\n${section}\n`);
  console.log(section);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
