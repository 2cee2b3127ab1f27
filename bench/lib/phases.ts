import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The contract between bench/run.ts and the benches that measure one part of the throughput
 * targets each (bench/bulk.ts, bench/expiry.ts, bench/import.ts, bench/access.ts, bench/fairness.ts,
 * bench/front-desk.ts).
 * Each exports one function:
 *
 *   export async function runBulkBench(options: PhaseOptions): Promise<PhaseResult>
 *
 * and, when started as a script (`npx tsx bench/bulk.ts`; guard with `isEntryPoint(import.meta.url)`
 * so that importing the module runs nothing), writes its own section of bench/RESULTS.md with
 * `writeSection` (bench/lib/report.ts). bench/run.ts imports the module only if its file exists, so
 * the quick and full runs pick a bench up the moment it lands and say "not built yet" until then.
 */

/** One target, as measured: `value` against `target` (e.g. "≥ 0.8×", "< 100 ms", "≥ 20,000 events/s"). */
export interface Ratio {
  name: string;
  value: number;
  target: string;
  met: boolean;
}

export interface PhaseOptions {
  /** `npm run bench:quick`: the same ratios from shorter runs; the whole phase should take ≤ 20 s (see `inQuickForm`). */
  quick: boolean;
  /** PostgreSQL URL allowed to CREATE DATABASE: a phase makes its own database and drops it. */
  adminUrl: string;
  log: (line: string) => void;
}

/**
 * `markdown`: the section's body (a `## …` heading first), without the `<!-- name:begin -->`
 * markers and without the command/commit line: `writeSection` adds both, so every section of
 * RESULTS.md states them alike.
 */
export interface PhaseResult {
  markdown: string;
  ratios: Ratio[];
}

export interface ExternalPhase {
  /** The marker name of its RESULTS.md section. */
  section: string;
  file: string;
  fn: string;
  /** The targets it covers, shown while the bench is not built yet. */
  covers: string[];
  /**
   * Whether `npm run bench:quick` runs it when BENCH_ONLY is not set. The quick form must finish
   * in under two minutes on the 2-core machine; a phase left out still has a quick form, run with
   * `BENCH_ONLY=<section> npm run bench:quick`. `npm run bench` runs every phase.
   */
  inQuickForm: boolean;
}

export const EXTERNAL_PHASES: readonly ExternalPhase[] = [
  {
    section: 'bulk',
    file: 'bulk.ts',
    fn: 'runBulkBench',
    covers: ['bulk extend full ÷ bare UPDATE ≤ 1.2×', 'single extends during a bulk p99 < 100 ms'],
    inQuickForm: true,
  },
  { section: 'expiry', file: 'expiry.ts', fn: 'runExpiryBench', covers: ['sweeper ≥ 20,000 expired events/s'], inQuickForm: true },
  { section: 'import', file: 'import.ts', fn: 'runImportBench', covers: ['import ≥ 50,000 rows/s'], inQuickForm: true },
  {
    section: 'access',
    file: 'access.ts',
    fn: 'runAccessBench',
    covers: ['access: Discord calls/s ÷ 50 ≥ 0.9 (grants after a bulk extend, revokes at one expiry instant)', 'access: 429s ≤ a handful'],
    // Its pace is Discord's 50 calls/s, not the machine's: even 300 members take ~25 s.
    inQuickForm: false,
  },
  {
    section: 'fairness',
    file: 'fairness.ts',
    fn: 'runFairnessBench',
    covers: [
      "fairness: another project's event p99 < 100 ms beside 100,000 pending to a 10 s receiver",
      'fairness: claim after ÷ before ≤ 1.5× in the common cases',
    ],
    // A worker start-up, a receiver that holds requests for seconds and four seeded claim cases: ~25 s.
    inQuickForm: false,
  },
  {
    section: 'front-desk',
    file: 'front-desk.ts',
    fn: 'runFrontDeskBench',
    covers: ['front desk: Discord interaction answered p99 < 300 ms (50/s for 60 s)', "front desk: GET /pay/{id} p99 beyond the fake Stripe's own time < 20 ms"],
    // Interactions at 50/s for 10 s (its pace is the load's, not the machine's), then the pay links: ~20 s.
    inQuickForm: false,
  },
];

export type PhaseOutcome =
  | { phase: ExternalPhase; status: 'done'; result: PhaseResult; seconds: number }
  | { phase: ExternalPhase; status: 'not built yet' }
  | { phase: ExternalPhase; status: 'error'; error: string; seconds: number };

const benchDir = fileURLToPath(new URL('..', import.meta.url));

function isPhaseResult(value: unknown): value is PhaseResult {
  const r = value as PhaseResult | null;
  return typeof r?.markdown === 'string' && Array.isArray(r.ratios);
}

/**
 * Runs one external bench if its file exists. A bench that throws (or returns something else than
 * a PhaseResult) is an `error` outcome, not a crash: the other phases still run and the run fails.
 */
export async function runExternalPhase(phase: ExternalPhase, options: PhaseOptions): Promise<PhaseOutcome> {
  const file = path.join(benchDir, phase.file);
  if (!existsSync(file)) {
    options.log(`${phase.section}: bench/${phase.file} not built yet, skipped`);
    return { phase, status: 'not built yet' };
  }
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const run = ((await import(pathToFileURL(file).href)) as Record<string, unknown>)[phase.fn];
    if (typeof run !== 'function') throw new Error(`bench/${phase.file} does not export ${phase.fn}`);
    const result: unknown = await (run as (o: PhaseOptions) => Promise<unknown>)(options);
    if (!isPhaseResult(result)) throw new Error(`${phase.fn} returned no { markdown, ratios }`);
    return { phase, status: 'done', result, seconds: seconds() };
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    options.log(`${phase.section}: ERROR ${error}`);
    return { phase, status: 'error', error: error.split('\n')[0]!, seconds: seconds() };
  }
}

/** True when the module at `moduleUrl` is the script node was started with, not a module run.ts imported. */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  return script !== undefined && pathToFileURL(path.resolve(script)).href === moduleUrl;
}
