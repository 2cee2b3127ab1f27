import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import type { LoadResult } from './load.js';
import { median } from './stats.js';

/** Renders bench/RESULTS.md from one run's figures. */

export type Side = 'full' | 'raw' | 'bare';

/** The commit measured (with `+changes` when the tree differs from it), for each section's header. */
export function measuredCommit(): string {
  const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src', 'drizzle', 'package.json') ? '+changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** One measured run: the load figures and the server process's CPU time per request. */
export interface RunResult extends LoadResult {
  serverCpuUs: number;
}

export interface PerRequestResult {
  backend: string;
  /** One entry per round, in round order. */
  runs: Record<Side, RunResult[]>;
}

export interface BulkResult {
  backend: string;
  rows: number;
  fullMs: number[];
  bareMs: number[];
  /** Why the run differs from the default plan, if it does. */
  note?: string;
}

export interface Report {
  command: string;
  date: Date;
  facts: Record<string, string>;
  settings: Record<string, string | number>;
  perRequest: PerRequestResult[];
  bulk: BulkResult[];
  elapsedS: number;
}

const PER_REQUEST_TARGET = 0.8;
const BULK_TARGET = 1.2;

const x = (n: number) => `${n.toFixed(2)}×`;
const verdict = (ok: boolean) => (ok ? '**met**' : '**missed**');

/** Ratio of `a` to `b` in each round, then the median: the two sides of a round share its noise. */
const pairedRatio = (a: readonly number[], b: readonly number[]) => median(a.map((v, i) => v / b[i]!));

function perRequestSection(p: PerRequestResult): string[] {
  const rps = (side: Side) => p.runs[side].map((r) => r.rps);
  const vsRaw = pairedRatio(rps('full'), rps('raw'));
  const vsBare = pairedRatio(rps('full'), rps('bare'));
  const row = (side: Side, label: string, ratio: string) => {
    const runs = p.runs[side];
    const cpu = median(runs.map((r) => r.serverCpuUs)).toFixed(0);
    return `| ${label} | ${median(rps(side)).toFixed(0)} | ${median(runs.map((r) => r.p50))} | ${median(runs.map((r) => r.p99))} | ${cpu} | ${ratio} |`;
  };
  const rounds = p.runs.full.map(
    (_, i) =>
      `| ${i + 1} | ${p.runs.full[i]!.rps.toFixed(0)} | ${p.runs.raw[i]!.rps.toFixed(0)} | ${p.runs.bare[i]!.rps.toFixed(0)} | ` +
      `${x(p.runs.full[i]!.rps / p.runs.raw[i]!.rps)} |`,
  );
  return [
    `### ${p.backend}`,
    '',
    '| server | req/s (median) | p50 ms | p99 ms | server CPU µs/req | full ÷ this (req/s) |',
    '|---|---:|---:|---:|---:|---:|',
    row('full', 'tenure, full stack (`node dist/main.js`)', '—'),
    row('raw', 'raw `node:http`, same statement (`MembershipsStore.extendOne`)', x(vsRaw)),
    row('bare', 'raw `node:http`, bare `UPDATE … WHERE project_id AND user_id`', x(vsBare)),
    '',
    `Full stack ÷ raw baseline (same statement): **${x(vsRaw)}** (target ≥ ${PER_REQUEST_TARGET}×: ${verdict(vsRaw >= PER_REQUEST_TARGET)}).`,
    `For transparency, full stack ÷ bare single-row UPDATE: ${x(vsBare)} (no target: the bare UPDATE`,
    'skips the row lock, the plan join and the outbox event the API must write).',
    '',
    '| round | full req/s | raw req/s | bare req/s | full ÷ raw |',
    '|---:|---:|---:|---:|---:|',
    ...rounds,
    '',
  ];
}

function bulkSection(results: BulkResult[]): string[] {
  if (results.length === 0) return [];
  const rows = results.map((b) => {
    const ratios = b.fullMs.map((f, i) => f / b.bareMs[i]!);
    const ratio = median(ratios);
    return (
      `| ${b.backend} | ${b.rows.toLocaleString('en-US')} | ${(median(b.fullMs) / 1000).toFixed(2)} | ${(median(b.bareMs) / 1000).toFixed(2)} | ` +
      `**${x(ratio)}** ${verdict(ratio <= BULK_TARGET)} | ${ratios.map(x).join(', ')} |`
    );
  });
  return [
    '## Bulk: `PATCH /v2/projects/{project_id}/memberships/extend`',
    '',
    'Full stack (HTTP → service → one transaction: the UPDATE and its `membership.bulk-extended` outbox',
    "row) against the bare `UPDATE memberships SET end_date=$1, status='active', updated_at=now() WHERE",
    `project_id=$2` + '` on the same database, alternating; target full ÷ bare ≤ ' + `${BULK_TARGET}×.`,
    '',
    '| storage | memberships | full s (median) | bare SQL s (median) | full ÷ bare (median of reps) | per rep |',
    '|---|---:|---:|---:|---:|---|',
    ...rows,
    '',
    ...results.flatMap((b) => (b.note ? [b.note, ''] : [])),
  ];
}

export async function writeResults(file: string, r: Report): Promise<string> {
  const lines = [
    '# tenure benchmark results',
    '',
    `Command: \`${r.command}\` · commit: ${measuredCommit()} · date: ${r.date.toISOString()} · whole run: ${Math.round(r.elapsedS)} s`,
    '',
    ...Object.entries(r.facts).map(([k, v]) => `- ${k}: ${v}`),
    `- settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    '',
    'The machine is shared and noisy: absolute numbers vary from run to run; the ratios, measured',
    'side by side in this run with alternating order, are the result. See bench/README.md.',
    '',
    '## Per request: `PATCH /v2/projects/{project_id}/memberships/{user_id}/extend`',
    '',
    `Each side: ${r.settings['rounds']} runs of ${r.settings['run s']} s (warm-up: ${r.settings['warm-up']}), ${r.settings['connections']} connections,`,
    'random members and future dates, order alternating by round; the ratio is the median of the',
    "per-round ratios. *Server CPU* is the server process's user + system time per request: on",
    "PostgreSQL it leaves out the database's work, on PGlite it includes it (the database runs in the",
    'server process).',
    '',
    ...r.perRequest.flatMap(perRequestSection),
    ...bulkSection(r.bulk),
  ];
  // Other benches keep their sections in this file between `<!-- name:begin … -->` and
  // `<!-- name:end -->` markers; a rewrite keeps them, after this bench's part.
  const others = (await readFile(file, 'utf8').catch(() => '')).match(/<!-- ([\w-]+):begin[\s\S]*?<!-- \1:end -->/g) ?? [];
  await writeFile(file, [lines.join('\n').trimEnd(), ...others].join('\n\n') + '\n');
  return file;
}
