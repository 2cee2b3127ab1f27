import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineFacts } from './lib/admin.js';
import type { BenchContext } from './lib/context.js';
import { perRequestPglite, perRequestPostgres, perRequestRatios, type PerRequestResult, type PerRequestSettings } from './lib/per-request.js';
import { EXTERNAL_PHASES, runExternalPhase, type PhaseOutcome } from './lib/phases.js';
import { stopAll } from './lib/processes.js';
import { consoleTable, failed, failureLines, outcomeRows, ratioRow, summaryLine, type Row } from './lib/ratios.js';
import { writeResults } from './lib/report.js';
import { stalenessReport } from './lib/staleness.js';

/**
 * `npm run bench` (full) and `npm run bench:quick` (`--quick`): every throughput target, each a
 * ratio measured side by side in one run. Per request: the full server (`node dist/main.js`)
 * against a bare `node:http` server doing only the same statement, and only a bare single-row
 * UPDATE (bench/raw-server.ts), on PostgreSQL and on PGlite. Then bench/bulk.ts, bench/expiry.ts,
 * bench/import.ts, bench/access.ts, bench/fairness.ts and bench/front-desk.ts, each if it exists (the quick form leaves
 * out the phases whose `inQuickForm` is false unless BENCH_ONLY names them: it must finish in under
 * two minutes). Prints the table of targets; the full run writes bench/RESULTS.md, the quick one
 * writes nothing. Exits 1 when a target is missed.
 * bench/README.md explains the method; the knobs below are environment variables.
 */

const quick = process.argv.includes('--quick');
const PHASES = ['pg', 'pglite', ...EXTERNAL_PHASES.map((p) => p.section)];
const QUICK_PHASES = ['pg', 'pglite', ...EXTERNAL_PHASES.filter((p) => p.inQuickForm).map((p) => p.section)];

/** BENCH_ONLY's phases; without it, every phase (the quick form: those in QUICK_PHASES). Fails on a name it does not know. */
function phasesToRun(only: string | undefined): Set<string> {
  if (!only) return new Set(quick ? QUICK_PHASES : PHASES);
  const names = only.split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !PHASES.includes(n));
  if (unknown.length) throw new Error(`BENCH_ONLY: no phase ${unknown.join(', ')} (phases: ${PHASES.join(', ')})`);
  return new Set(names);
}

const num = (name: string, full: number, fast: number) => (process.env[name] ? Number(process.env[name]) : quick ? fast : full);
const cfg = {
  adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  /**
   * Five rounds of 6 s rather than three of 10 s: this machine's speed drifts by a third within
   * tens of seconds (one run's PGlite rounds gave full ÷ raw 0.69, 0.58 and 1.18, while ten-second
   * runs of the two servers alone agreed within 10%); more rounds, each pair of sides closer in
   * time, give a median that moves less from run to run for about the same length.
   */
  durationS: num('BENCH_DURATION', 6, 3),
  /**
   * Before each measured run. The first warm-up has already brought each server to speed (in the
   * quick form PGlite's two rounds agreed within about 10% with 1 s here), so the quick form's
   * half second only takes the run past its start after the other side's load.
   */
  warmupS: num('BENCH_WARMUP', 2, 0.5),
  /** Once per server before its first run: PGlite's WASM takes seconds of load to reach full speed. */
  firstWarmupS: num('BENCH_FIRST_WARMUP', 10, 5),
  firstWarmupPgS: num('BENCH_FIRST_WARMUP_PG', num('BENCH_FIRST_WARMUP', 10, 2), 2),
  rounds: num('BENCH_ROUNDS', 5, 2),
  connections: num('BENCH_CONNECTIONS', 10, 10),
  members: num('BENCH_MEMBERS', 10_000, 2_000),
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
  /** Phases to run, comma-separated: pg, pglite, bulk, expiry, import, access, fairness, front-desk (default: all; quick: QUICK_PHASES). */
  only: phasesToRun(process.env.BENCH_ONLY),
};
/** Phases this run leaves out, with the command that runs them. */
const leftOut = PHASES.filter((p) => !cfg.only.has(p));
const leftOutLine = leftOut.length
  ? `left out: ${leftOut.join(', ')} (BENCH_ONLY=${leftOut.join(',')} ${quick ? 'npm run bench:quick' : 'npx tsx bench/run.ts'} runs them${quick && !process.env.BENCH_ONLY ? '; `npm run bench` runs everything' : ''})`
  : '';
// What RESULTS.md says ran: a run of some phases names them, so the file never claims a full run.
const command = process.env.BENCH_ONLY
  ? `npm run build && BENCH_ONLY=${[...cfg.only].join(',')} npx tsx bench/run.ts${quick ? ' --quick' : ''}`
  : quick
    ? 'npm run bench:quick'
    : 'npm run bench';

const root = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

const cleanupSteps: (() => Promise<unknown>)[] = [];
let tmp = '';
let cleaning: Promise<void> | null = null;

/** Stops the servers, drops the bench databases and removes the temp dir; every caller awaits the same run. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll();
    for (const step of cleanupSteps.splice(0)) await step();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  })();
  return cleaning;
}

const perRequestSettings = (firstWarmupS: number, sides: PerRequestSettings['sides']): PerRequestSettings => ({
  connections: cfg.connections,
  durationS: cfg.durationS,
  warmupS: cfg.warmupS,
  firstWarmupS,
  rounds: cfg.rounds,
  members: cfg.members,
  sides,
});

interface Measured {
  perRequest: PerRequestResult[];
  outcomes: PhaseOutcome[];
  /** A per-request phase that crashed: the run goes on and fails. */
  errors: Row[];
}

/** Runs `phase`, logging how long it took; a crash becomes an ERROR row instead of ending the run. */
async function timed<T>(name: string, measured: Measured, phase: () => Promise<T>): Promise<T | undefined> {
  const started = performance.now();
  try {
    return await phase();
  } catch (err) {
    log(`${name}: ERROR ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    measured.errors.push({ name, value: '—', target: String(err instanceof Error ? err.message : err).split('\n')[0]!, status: 'ERROR' });
    return undefined;
  } finally {
    log(`${name}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

async function measure(ctx: BenchContext): Promise<Measured> {
  const measured: Measured = { perRequest: [], outcomes: [], errors: [] };
  // The quick form leaves out PGlite's bare side: no target reads it.
  if (cfg.only.has('pg')) {
    const result = await timed('per request, PostgreSQL', measured, () =>
      perRequestPostgres(ctx, perRequestSettings(cfg.firstWarmupPgS, ['full', 'raw', 'bare'])),
    );
    if (result) measured.perRequest.push(result);
  }
  if (cfg.only.has('pglite')) {
    const sides = quick ? (['full', 'raw'] as const) : (['full', 'raw', 'bare'] as const);
    const result = await timed('per request, PGlite', measured, () => perRequestPglite(ctx, perRequestSettings(cfg.firstWarmupS, sides)));
    if (result) measured.perRequest.push(result);
  }
  for (const phase of EXTERNAL_PHASES) {
    if (!cfg.only.has(phase.section)) continue;
    const started = performance.now();
    const outcome = await runExternalPhase(phase, { quick, adminUrl: cfg.adminUrl, log });
    log(`${phase.section}: ${outcome.status}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    measured.outcomes.push(outcome);
  }
  return measured;
}

function rowsOf(m: Measured): Row[] {
  return [
    ...m.perRequest.flatMap(perRequestRatios).map(ratioRow),
    ...m.errors,
    ...m.outcomes.flatMap(outcomeRows),
  ];
}

async function main(): Promise<void> {
  process.chdir(root);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  const started = Date.now();
  log(`${command}: ${quick ? 'quick form (shorter runs, writes nothing)' : 'full run, writes bench/RESULTS.md'}; phases: ${[...cfg.only].join(', ')}`);
  if (leftOutLine) log(leftOutLine);
  const facts = await machineFacts(cfg.adminUrl, root);
  tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-'));
  const ctx: BenchContext = { tmp, adminUrl: cfg.adminUrl, logLevel: cfg.logLevel, log, onCleanup: (step) => cleanupSteps.push(step) };
  let measured: Measured;
  try {
    measured = await measure(ctx);
  } finally {
    await cleanup();
  }
  const rows = rowsOf(measured);
  const elapsedS = (Date.now() - started) / 1000;

  if (!quick) {
    const file = await writeResults({
      command,
      date: new Date(started),
      facts,
      settings: {
        connections: cfg.connections,
        'run s': cfg.durationS,
        'warm-up': `${cfg.firstWarmupPgS} s (PostgreSQL) / ${cfg.firstWarmupS} s (PGlite) per server, then ${cfg.warmupS} s per run`,
        rounds: cfg.rounds,
        memberships: cfg.members,
        'server LOG_LEVEL': cfg.logLevel,
      },
      rows,
      perRequest: measured.perRequest,
      sections: measured.outcomes.flatMap((o) => (o.status === 'done' ? [{ name: o.phase.section, markdown: o.result.markdown }] : [])),
      elapsedS,
    });
    log(`wrote ${path.relative(root, file)}`);
  }

  const out = [
    '',
    `${command} · ${Math.round(elapsedS)} s · settings: ${cfg.rounds} rounds of ${cfg.durationS} s, warm-up ${cfg.firstWarmupPgS} s (PostgreSQL) / ${cfg.firstWarmupS} s (PGlite) per server then ${cfg.warmupS} s per run, ${cfg.members} memberships`,
    '',
    ...consoleTable(rows),
    ...(leftOutLine ? [leftOutLine] : []),
    '',
  ];
  if (quick) out.push(...(await stalenessReport()), '');
  const failures = failureLines(rows);
  if (failures.length) out.push('='.repeat(72), ...failures, summaryLine(rows), '='.repeat(72));
  else out.push(summaryLine(rows));
  process.stdout.write(`${out.join('\n')}\n`);
  if (failed(rows).length) process.exitCode = 1;
}

await main();
