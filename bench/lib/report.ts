import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { pairedRatio, PER_REQUEST_TARGETS, type PerRequestResult, type Side } from './per-request.js';
import { markdownTable, summaryLine, type Row } from './ratios.js';
import { median } from './stats.js';

/** bench/RESULTS.md: its top part (written by bench/run.ts) and the marked sections of other benches. */

/** bench/RESULTS.md, or BENCH_RESULTS_FILE (a scratch copy, for a trial run that should not rewrite the record). */
export const RESULTS_FILE = process.env.BENCH_RESULTS_FILE ?? fileURLToPath(new URL('../RESULTS.md', import.meta.url));

/**
 * What the measured numbers depend on. The results file and the bench's notes are left out: a
 * commit that only records results or edits the README does not make them stale.
 */
export const MEASURED_PATHS = ['src', 'bench', 'drizzle', ':(exclude)bench/RESULTS.md', ':(exclude)bench/README.md'];

const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

/**
 * The commit measured, `git rev-parse --short HEAD`, with `-dirty` when src/, bench/ or drizzle/
 * hold uncommitted changes (untracked files included): the numbers then come from code no commit has.
 */
export function measuredCommit(): string {
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', ...MEASURED_PATHS) ? '-dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** The line every section of RESULTS.md starts with: how it was made and from which commit. */
export const provenance = (command: string, date: Date, extra = '') =>
  `Command: \`${command}\` · commit: ${measuredCommit()} · date: ${date.toISOString()}${extra}`;

const SECTION = /<!-- ([\w-]+):begin[\s\S]*?<!-- \1:end -->/g;

/** Sections written by this run's phases come first, in this order; other benches' sections follow as they were. */
const SECTION_ORDER = ['bulk', 'expiry', 'import', 'access', 'fairness', 'front-desk'];

interface Parsed {
  top: string;
  sections: Map<string, string>;
}

async function readResults(file: string): Promise<Parsed> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const first = text.search(/<!-- [\w-]+:begin/);
  const sections = new Map<string, string>();
  for (const m of text.matchAll(SECTION)) sections.set(m[1]!, m[0]);
  return { top: (first === -1 ? text : text.slice(0, first)).trimEnd(), sections };
}

async function writeParsed(file: string, { top, sections }: Parsed): Promise<void> {
  const names = [...SECTION_ORDER.filter((n) => sections.has(n)), ...[...sections.keys()].filter((n) => !SECTION_ORDER.includes(n))];
  await writeFile(file, [top, ...names.map((n) => sections.get(n)!)].filter(Boolean).join('\n\n') + '\n');
}

/**
 * A bench's section between `<!-- name:begin -->` and `<!-- name:end -->`: its `## …` heading,
 * then the provenance line (unless the markdown states its commit itself), then the rest.
 */
export function renderSection(name: string, command: string, markdown: string, date = new Date()): string {
  const body = markdown
    .replace(new RegExp(`<!-- ${name}:(begin|end)[^>]*-->`, 'g'), '')
    .trim()
    .split('\n');
  if (!/commit:/.test(body.slice(0, 6).join('\n'))) {
    const at = body[0]?.startsWith('#') ? 1 : 0;
    body.splice(at, 0, ...(at ? [''] : []), provenance(command, date), ...(at ? [] : ['']));
  }
  return [`<!-- ${name}:begin (written by \`${command}\`) -->`, ...body, `<!-- ${name}:end -->`].join('\n');
}

/** Writes (or replaces) one bench's section of RESULTS.md, leaving the top part and every other section as they are. */
export async function writeSection(name: string, command: string, markdown: string, file = RESULTS_FILE): Promise<void> {
  const parsed = await readResults(file);
  parsed.sections.set(name, renderSection(name, command, markdown));
  await writeParsed(file, parsed);
}

export interface Report {
  command: string;
  date: Date;
  facts: Record<string, string>;
  settings: Record<string, string | number>;
  /** Every target, as the run's table shows it. */
  rows: Row[];
  perRequest: PerRequestResult[];
  /** Sections of the external benches measured in this run: marker name → markdown. */
  sections: { name: string; markdown: string }[];
  elapsedS: number;
}

const x = (n: number) => `${n.toFixed(2)}×`;
const verdict = (ok: boolean) => (ok ? '**met**' : '**missed**');

function perRequestSection(p: PerRequestResult): string[] {
  const rps = (side: Side) => p.runs[side].map((r) => r.rps);
  const sides = (['full', 'raw', 'bare'] as const).filter((side) => p.runs[side].length > 0);
  const vsRaw = pairedRatio(rps('full'), rps('raw'));
  const vsBare = pairedRatio(rps('full'), rps('bare'));
  const label = {
    full: 'tenure, full stack (`node dist/main.js`)',
    raw: 'raw `node:http`, same statement (`MembershipsStore.extendOne`)',
    bare: 'raw `node:http`, bare `UPDATE … WHERE project_id AND user_id`',
  };
  // The database's own CPU per request, where it runs as its own processes on this machine.
  const withDatabase = p.backend === 'PostgreSQL' && p.runs.full.some((r) => Number.isFinite(r.databaseCpuUs));
  const row = (side: Side) => {
    const runs = p.runs[side];
    const cpu = median(runs.map((r) => r.serverCpuUs)).toFixed(0);
    const dbCpu = withDatabase ? ` ${median(runs.map((r) => r.databaseCpuUs ?? Number.NaN)).toFixed(0)} |` : '';
    const ratio = side === 'full' ? '—' : x(side === 'raw' ? vsRaw : vsBare);
    return `| ${label[side]} | ${median(rps(side)).toFixed(0)} | ${median(runs.map((r) => r.p50))} | ${median(runs.map((r) => r.p99))} | ${cpu} |${dbCpu} ${ratio} |`;
  };
  const bareTarget =
    p.backend === 'PostgreSQL'
      ? `Full stack ÷ bare single-row UPDATE: **${x(vsBare)}** (target ≥ ${PER_REQUEST_TARGETS.bare}×: ${verdict(vsBare >= PER_REQUEST_TARGETS.bare)}).`
      : `Full stack ÷ bare single-row UPDATE: ${x(vsBare)} (shown, no target on PGlite).`;
  return [
    `### ${p.backend}`,
    '',
    `| server | req/s (median) | p50 ms | p99 ms | server CPU µs/req |${withDatabase ? ' database CPU µs/req |' : ''} full ÷ this (req/s) |`,
    `|---|---:|---:|---:|---:|${withDatabase ? '---:|' : ''}---:|`,
    ...sides.map(row),
    '',
    `Full stack ÷ raw baseline (same statement): **${x(vsRaw)}** (target ≥ ${PER_REQUEST_TARGETS.raw}×: ${verdict(vsRaw >= PER_REQUEST_TARGETS.raw)}).`,
    ...(p.runs.bare.length ? [bareTarget] : []),
    '',
    `| round | ${sides.map((side) => `${side} req/s`).join(' | ')} | full ÷ raw | full ÷ bare |`,
    `|---:|${sides.map(() => '---:|').join('')}---:|---:|`,
    ...p.runs.full.map((full, i) => {
      const at = (side: Side) => p.runs[side][i]?.rps ?? Number.NaN;
      return `| ${i + 1} | ${sides.map((side) => at(side).toFixed(0)).join(' | ')} | ${x(full.rps / at('raw'))} | ${x(full.rps / at('bare'))} |`;
    }),
    '',
  ];
}

/**
 * Rewrites RESULTS.md's top part (the targets table, the machine, the per-request figures) and the
 * sections of the benches this run measured; every other bench's section stays as it was.
 */
export async function writeResults(r: Report, file = RESULTS_FILE): Promise<string> {
  const top = [
    '# tenure benchmark results',
    '',
    `${provenance(r.command, r.date)} · whole run: ${Math.round(r.elapsedS)} s`,
    '',
    '## Targets',
    '',
    'Every throughput target, measured in this run; the sections below give the method and every figure.',
    '`npm run bench:quick` re-measures the per-request, bulk, expiry and import targets in under two',
    'minutes (access and fairness too when `BENCH_ONLY` names them); `npm run bench:check` says how',
    'many commits touching src/, bench/ or drizzle/ have landed since the commit above.',
    '',
    ...markdownTable(r.rows),
    '',
    `**${summaryLine(r.rows)}**`,
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
    'server process). *Database CPU* (PostgreSQL) is the database server\'s: every `postgres` process',
    "on this machine, background work (the server's own loops, autovacuum) included.",
    '',
    ...r.perRequest.flatMap(perRequestSection),
  ];
  const parsed = await readResults(file);
  parsed.top = top.join('\n').trimEnd();
  for (const s of r.sections) parsed.sections.set(s.name, renderSection(s.name, r.command, s.markdown, r.date));
  await writeParsed(file, parsed);
  return file;
}
