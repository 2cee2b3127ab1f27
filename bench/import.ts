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
 * runs; the project has no webhook, so it creates no delivery); the database server's CPU for it
 * (every postgres process, from /proc) is shown beside node's. When the old per-batch statement
 * (`MembershipsStore.importBatch`, 5,000 rows per statement) still exists, it is measured on
 * 100,000 rows beside it. Target: ≥ 50,000 rows/s. The section of bench/RESULTS.md between
 * `<!-- import:begin -->` and `<!-- import:end -->` is rewritten; the rest is left alone.
 *
 * The full form also measures a plain COPY, right after, on a database of its own: the same number
 * of rows, prebuilt, COPYed straight into memberships, users and events (every index, foreign key
 * and trigger as they are; no staging table, no statement, no validation), 20,000-row transactions
 * on two connections, with the database server's CPU for it, measured as the import's is. It is the
 * plainest way to write these rows: import ÷ plain COPY says how much the import's own work adds,
 * and the plain COPY's database CPU per row says whether the target is within the machine's reach
 * (50,000 rows/s on 2 cores leaves 40 µs of CPU per row for everything).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import { importMemberships } from '../src/domain/memberships/membership-import.js';
import { createLogger } from '../src/logger.js';
import { rowsOf } from '../src/database/db.js';
import { adminQuery } from './lib/admin.js';
import { databaseCpuSeconds } from './lib/processes.js';
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

/**
 * `rows` good rows from user id `first` on, plus a header and every 100,000th line a bad one. With
 * BENCH_IMPORT_COLUMNS=all each row also has a user_name and a start_date (a year before its end),
 * to measure what the optional columns cost when a file fills them.
 */
async function writeCsv(file: string, rows: number, first: number): Promise<{ bad: number }> {
  const out = createWriteStream(file);
  const now = Date.now();
  const all = process.env.BENCH_IMPORT_COLUMNS === 'all';
  let bad = 0;
  let buffer = all ? 'user_id,end_date,user_name,start_date\n' : 'user_id,end_date\n';
  for (let i = 0; i < rows; i++) {
    const end = now + ((i % 2 === 0 ? 30 : -30) * 86_400_000 + (i % 86_400) * 1000);
    const extra = all ? `,Member ${i},${new Date(end - 365 * 86_400_000).toISOString()}` : '';
    buffer += `${first + i},${i % 4 < 2 ? end : new Date(end).toISOString()}${extra}\n`;
    if (i % 100_000 === 99_999) {
      buffer += `not-a-user,${end}${all ? ',,' : ''}\n`;
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

/**
 * The plain COPY (see the file comment): `rows` prebuilt rows COPYed into memberships, users and events of
 * a fresh project, on `connections` connections, each 20,000-row chunk one transaction. The events'
 * data is the object an import writes, as text.
 */
async function floorCopy(url: string, projectId: string, rows: number, connections = 2): Promise<{ seconds: number; dbCpu: number }> {
  const chunk = 20_000;
  const now = Date.now();
  const startIso = new Date(now).toISOString();
  const texts = (first: number) => {
    let m = '';
    let u = '';
    let e = '';
    for (let i = first; i < Math.min(rows, first + chunk); i++) {
      const iso = new Date(now + ((i % 2 === 0 ? 30 : -30) * 86_400_000 + (i % 86_400) * 1000)).toISOString();
      const id = randomUUID();
      const status = i % 2 === 0 ? 'active' : 'expired';
      const user = String(3_000_000_000 + i);
      m += `${id}\t${projectId}\t${user}\t${iso}\t${status}\n`;
      u += `${projectId}\t${user}\n`;
      e += `${projectId}\tmembership.created\t{"membership": {"status": "${status}", "plan_id": null, "user_id": "${user}", "plan_name": null, "user_name": null, "membership_id": "${id}", "plan_duration": null, "subscription_id": null, "membership_end_date": "${iso}", "subscription_status": null, "membership_start_date": "${startIso}"}}\n`;
    }
    return [m, u, e] as const;
  };
  const pool = new pg.Pool({ connectionString: url, max: connections });
  try {
    const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
    const cpu0 = databaseCpuSeconds();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        for (let first = next; first < rows; first = next) {
          next += chunk;
          const [m, u, e] = texts(first);
          await client.query('BEGIN');
          await pipeline(Readable.from([m]), client.query(copyFrom('COPY memberships (id, project_id, user_id, end_date, status) FROM STDIN')));
          await pipeline(Readable.from([u]), client.query(copyFrom('COPY users (project_id, user_id) FROM STDIN')));
          await pipeline(Readable.from([e]), client.query(copyFrom('COPY events (project_id, type, data) FROM STDIN')));
          await client.query('COMMIT');
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const dbCpu = databaseCpuSeconds() - cpu0;
    for (const client of clients) client.release();
    return { seconds, dbCpu };
  } finally {
    await pool.end();
  }
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
    const db0 = databaseCpuSeconds();
    const t0 = performance.now();
    const report = await importMemberships(
      { chunks: container.stores.membershipImport, clock: container.clock },
      projectId,
      createReadStream(file),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds() - cpu0;
    const dbCpu = databaseCpuSeconds() - db0;
    const rate = rows / seconds;
    const stored = await counts(container, projectId);
    if (report.inserted !== rows || report.rejected !== bad || stored.memberships !== rows || stored.events !== rows || stored.users !== rows) {
      throw new Error(`import bench: expected ${rows} memberships, events and users and ${bad} rejections, got ${JSON.stringify({ report: { inserted: report.inserted, rejected: report.rejected }, stored })}`);
    }
    log(`import: ${rows} rows in ${seconds.toFixed(1)} s = ${Math.round(rate)} rows/s (node CPU ${cpu.toFixed(1)} s, database CPU ${dbCpu.toFixed(1)} s)`);

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

    let floor: { rate: number; seconds: number; dbCpu: number } | null = null;
    if (!options.quick) {
      const floorName = `${name}_floor`;
      const floorUrl = new URL(options.adminUrl);
      floorUrl.pathname = `/${floorName}`;
      await adminQuery(options.adminUrl, `CREATE DATABASE ${floorName}`);
      try {
        // Migrated by a container, as the import's database is.
        const floorContainer = await createContainer({ config: loadConfig({ DATABASE_URL: floorUrl.toString() }), logger: createLogger('silent') });
        try {
          const floorProject = await project(floorContainer, 'import bench, plain COPY');
          const measured = await floorCopy(floorUrl.toString(), floorProject, rows);
          floor = { ...measured, rate: rows / measured.seconds };
        } finally {
          await floorContainer.close();
        }
      } finally {
        await adminQuery(options.adminUrl, `DROP DATABASE IF EXISTS ${floorName} WITH (FORCE)`).catch(() => undefined);
      }
      log(`import: plain COPY of prebuilt rows, ${rows} rows in ${floor.seconds.toFixed(1)} s = ${Math.round(floor.rate)} rows/s (database CPU ${floor.dbCpu.toFixed(1)} s)`);
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
      '| path | rows | seconds | rows/s | node CPU s | database CPU s | target |',
      '|---|---:|---:|---:|---:|---:|---|',
      `| COPY + chunked INSERT … SELECT, 2 chunks in flight | ${rows.toLocaleString('en-US')} | ${seconds.toFixed(1)} | **${Math.round(rate).toLocaleString('en-US')}** | ${cpu.toFixed(1)} | ${dbCpu.toFixed(1)} (${((dbCpu / rows) * 1e6).toFixed(0)} µs a row) | ≥ ${TARGET.toLocaleString('en-US')}: ${met ? '**met**' : '**missed**'} |`,
      ...(legacy
        ? [`| old: unnest batches of 5,000, one at a time (\`importBatch\`) | ${legacy.rows.toLocaleString('en-US')} | ${(legacy.rows / legacy.rate).toFixed(1)} | ${Math.round(legacy.rate).toLocaleString('en-US')} | — | — | — |`]
        : []),
      ...(floor
        ? [
            `| plain COPY: the same rows prebuilt, COPYed straight into memberships, users and events (no staging, statement or validation), 2 connections | ${rows.toLocaleString('en-US')} | ${floor.seconds.toFixed(1)} | ${Math.round(floor.rate).toLocaleString('en-US')} | — | ${floor.dbCpu.toFixed(1)} (${((floor.dbCpu / rows) * 1e6).toFixed(0)} µs a row) | — |`,
          ]
        : []),
      '',
      `Import rate ÷ target: ${ratio.toFixed(2)}×.${floor ? ` Import ÷ plain COPY: ${(rate / floor.rate).toFixed(2)}×. The plain COPY's database CPU, ${((floor.dbCpu / rows) * 1e6).toFixed(0)} µs a row, against the 40 µs of CPU a row that 50,000 rows/s leaves on 2 cores for everything (docs/configuration.md "Importing memberships").` : ''}`,
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
