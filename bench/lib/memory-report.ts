import type { MemoryBreakdown } from './memory.js';

/** bench/memory.ts's figures and its section of bench/RESULTS.md. */

export interface CacheRound {
  /** Extend-one req/s with PGlite's own page cache (128 MB), and with tenure's. */
  before: number;
  after: number;
  beforeRss: number;
  afterRss: number;
}

export interface SizeResult {
  members: number;
  disk: number;
  /** At rest after a later start (migrated, seeded). */
  rest: MemoryBreakdown;
  loadRps: number;
  loadMax: number;
  /** VmHWM at the end of the per-request load: the peak since the start. */
  loadPeak: number;
  afterLoad: MemoryBreakdown;
  bulkS: number;
  bulkMax: number;
  bulkPeak: number;
  /** Mean RSS over the run's first and last window (windowS: ten minutes for a long run, else a tenth). */
  steady: { first: number; last: number; windowS: number; requests: number; seconds: number } | null;
  cache: CacheRound[];
  /** The import process's peak; on PostgreSQL also the server's largest reading meanwhile. */
  import: { peak: number; seconds: number; rows: number; serverMax: number | null } | null;
}

export interface StorageResult {
  storage: 'PostgreSQL' | 'PGlite';
  first: MemoryBreakdown;
  sizes: SizeResult[];
}

export const MEMORY_TARGETS = { embeddedRest: 250, embeddedPeak: 400, growth: 1.1, postgresRest: 150 } as const;

const windowOf = (seconds: number) => (seconds >= 600 ? 'ten minutes' : 'tenth');
const mb = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '—');
const count = (n: number) => n.toLocaleString('en-US');
const verdict = (ok: boolean) => (ok ? '**met**' : '**missed**');

interface Target {
  what: string;
  value: string;
  target: string;
  met: boolean;
}

function targets(results: StorageResult[]): Target[] {
  const rows: Target[] = [];
  for (const r of results) {
    const embedded = r.storage === 'PGlite';
    const restLimit = embedded ? MEMORY_TARGETS.embeddedRest : MEMORY_TARGETS.postgresRest;
    const rests = [{ label: 'first start', rss: r.first.rss }, ...r.sizes.map((s) => ({ label: `later start, ${count(s.members)} members`, rss: s.rest.rss }))];
    for (const rest of rests) rows.push({ what: `${r.storage}: at rest, ${rest.label}`, value: `${mb(rest.rss)} MiB`, target: `≤ ${restLimit} MiB`, met: rest.rss <= restLimit });
    if (!embedded) continue;
    for (const s of r.sizes) {
      rows.push({ what: `PGlite: peak under per-request load, ${count(s.members)} members`, value: `${mb(s.loadPeak)} MiB`, target: `≤ ${MEMORY_TARGETS.embeddedPeak} MiB`, met: s.loadPeak <= MEMORY_TARGETS.embeddedPeak });
      if (s.import) rows.push({ what: `PGlite: peak of a ${count(s.import.rows)}-row import`, value: `${mb(s.import.peak)} MiB`, target: `≤ ${MEMORY_TARGETS.embeddedPeak} MiB`, met: s.import.peak <= MEMORY_TARGETS.embeddedPeak });
      if (s.steady) {
        const growth = s.steady.last / s.steady.first;
        rows.push({ what: `PGlite: steady load, ${count(s.members)} members, last ${windowOf(s.steady.windowS)} ÷ first`, value: `${growth.toFixed(2)}× (${mb(s.steady.first)} → ${mb(s.steady.last)} MiB)`, target: `≤ ${MEMORY_TARGETS.growth}×`, met: growth <= MEMORY_TARGETS.growth });
      }
    }
  }
  // A phase left out (BENCH_MEMORY_PHASES) measured nothing: it meets and misses no target.
  return rows.filter((t) => !t.value.startsWith('—') && !t.value.includes('NaN'));
}

function storageTables(r: StorageResult): string[] {
  const f = r.first;
  return [
    `### ${r.storage}`,
    '',
    `First start (${r.storage === 'PGlite' ? 'an empty data directory: initdb, then every migration' : 'an empty database: every migration'}): at rest **${mb(f.rss)} MiB**, peak ${mb(f.peak)} MiB.`,
    '',
    '| members | disk MiB | at rest MiB (start peak) | per-request load: req/s, max, peak MiB | bulk extend of all: s, max, peak MiB | steady mixed: first → last tenth (ten minutes in a long run) MiB | import: s, the import\'s peak MiB |',
    '|---:|---:|---:|---|---|---|---|',
    ...r.sizes.map((s) => {
      const steady = s.steady ? `${mb(s.steady.first)} → ${mb(s.steady.last)} (${(s.steady.last / s.steady.first).toFixed(2)}×, ${count(s.steady.requests)} requests in ${s.steady.seconds} s)` : '—';
      const imp = s.import ? `${count(s.import.rows)} rows in ${s.import.seconds.toFixed(0)} s, peak ${mb(s.import.peak)}${s.import.serverMax !== null ? `; the server meanwhile ≤ ${mb(s.import.serverMax)}` : ' (server stopped: one process per data directory)'}` : '—';
      return `| ${count(s.members)} | ${mb(s.disk)} | **${mb(s.rest.rss)}** (${mb(s.rest.peak)}) | ${Number.isFinite(s.loadRps) ? `${s.loadRps.toFixed(0)} req/s` : '—'}, ${mb(s.loadMax)}, **${mb(s.loadPeak)}** | ${Number.isFinite(s.bulkS) ? `${s.bulkS.toFixed(1)} s` : Number.isFinite(s.bulkMax) ? 'no answer within 300 s' : '—'}, ${mb(s.bulkMax)}, ${mb(s.bulkPeak)} | ${steady} | ${imp} |`;
    }),
    '',
    'Where it is (smaps), MiB: resident part of PGlite\'s WebAssembly memory / its size, mapped files (node and its libraries), every other anonymous mapping (V8\'s heap, compiled code, malloc):',
    '',
    '| when | RSS | WebAssembly resident / size | files | other anonymous |',
    '|---|---:|---:|---:|---:|',
    `| first start, at rest | ${mb(f.rss)} | ${mb(f.wasmRss)} / ${mb(f.wasmSize)} | ${mb(f.files)} | ${mb(f.otherAnon)} |`,
    ...r.sizes.flatMap((s) => [
      `| ${count(s.members)} members, at rest | ${mb(s.rest.rss)} | ${mb(s.rest.wasmRss)} / ${mb(s.rest.wasmSize)} | ${mb(s.rest.files)} | ${mb(s.rest.otherAnon)} |`,
      `| ${count(s.members)} members, after the per-request load | ${mb(s.afterLoad.rss)} | ${mb(s.afterLoad.wasmRss)} / ${mb(s.afterLoad.wasmSize)} | ${mb(s.afterLoad.files)} | ${mb(s.afterLoad.otherAnon)} |`,
    ]),
    '',
  ];
}

function cacheTable(results: StorageResult[], median: (xs: number[]) => number): string[] {
  const sizes = results.flatMap((r) => r.sizes).filter((s) => s.cache.length > 0);
  if (sizes.length === 0) return [];
  return [
    '### PGlite\'s page cache: 128 MB (PGlite\'s default) against tenure\'s, side by side',
    '',
    'Two servers on copies of one data directory, extend-one load (10 connections, 6 s after 2 s of warm-up) alternating between them by round; the ratio is the median of the per-round ratios.',
    '',
    '| members | rounds: 128 MB req/s / tenure\'s req/s | tenure\'s ÷ 128 MB (median) | RSS after the rounds, 128 MB / tenure\'s, MiB |',
    '|---:|---|---:|---:|',
    ...sizes.map((s) => {
      const last = s.cache.at(-1)!;
      return `| ${count(s.members)} | ${s.cache.map((c) => `${c.before.toFixed(0)} / ${c.after.toFixed(0)}`).join(', ')} | **${median(s.cache.map((c) => c.after / c.before)).toFixed(2)}×** | ${mb(last.beforeRss)} / ${mb(last.afterRss)} |`;
    }),
    '',
  ];
}

export function memoryMarkdown(results: StorageResult[], settings: Record<string, number | number[]>, median: (xs: number[]) => number): string {
  const rows = targets(results);
  return [
    '## Memory: `node dist/main.js` at rest, under load, during an import and over a steady run',
    '',
    'Resident memory (VmRSS) and its peak since the process started (VmHWM), read from /proc from outside the real server started as `npm start` starts it (no flags, no probe inside it); "max" is the largest of the readings taken every 250 ms during a phase. MiB.',
    `Settings: ${Object.entries(settings).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('/') : v}`).join(', ')}.`,
    '',
    '| target | measured | target | |',
    '|---|---:|---:|---|',
    ...rows.map((t) => `| ${t.what} | ${t.value} | ${t.target} | ${verdict(t.met)} |`),
    '',
    `**${rows.filter((t) => t.met).length} of ${rows.length} met.**`,
    '',
    ...results.flatMap(storageTables),
    ...cacheTable(results, median),
  ].join('\n');
}
