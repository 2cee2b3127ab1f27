import type { PhaseOutcome, Ratio } from './phases.js';

/**
 * The table of every throughput target: what bench/run.ts prints at the end of a run, puts at the
 * top of RESULTS.md, and turns into the exit code. A target not measured because its bench does
 * not exist yet is listed, not counted as missed; a bench that crashed counts as missed.
 */

export type RowStatus = 'met' | 'MISSED' | 'not built yet' | 'ERROR';

export interface Row {
  name: string;
  /** Formatted, with the target's unit. */
  value: string;
  target: string;
  status: RowStatus;
}

/** The unit of a target such as "≥ 0.8×", "< 100 ms" or "≥ 20,000 events/s": what follows its number. */
const unitOf = (target: string) => /[\d.,]+\s*(.*)$/.exec(target)?.[1]?.trim() ?? '';

export function formatValue(value: number, target: string): string {
  if (!Number.isFinite(value)) return String(value);
  const unit = unitOf(target);
  const number = Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2);
  if (unit === '×') return `${number}×`;
  return unit ? `${number}${unit.startsWith('/') ? '' : ' '}${unit}` : number;
}

export const ratioRow = (r: Ratio): Row => ({
  name: r.name,
  value: formatValue(r.value, r.target),
  target: r.target,
  status: r.met ? 'met' : 'MISSED',
});

/** The rows an external bench contributes: its ratios, or one row per target it covers. */
export function outcomeRows(outcome: PhaseOutcome): Row[] {
  const file = `bench/${outcome.phase.file}`;
  switch (outcome.status) {
    case 'done':
      return outcome.result.ratios.map(ratioRow);
    case 'not built yet':
      return outcome.phase.covers.map((name) => ({ name, value: '—', target: `(${file})`, status: 'not built yet' }));
    case 'error':
      return [{ name: `${outcome.phase.section} (${file})`, value: '—', target: outcome.error, status: 'ERROR' }];
  }
}

export const failed = (rows: readonly Row[]) => rows.filter((r) => r.status === 'MISSED' || r.status === 'ERROR');

/** One line per missed target, to stand out at the end of a run's log. */
export function failureLines(rows: readonly Row[]): string[] {
  return failed(rows).map((r) =>
    r.status === 'ERROR' ? `FAILED: ${r.name}: the bench crashed: ${r.target}` : `FAILED: ${r.name}: ${r.value} (target ${r.target})`,
  );
}

export function summaryLine(rows: readonly Row[]): string {
  const bad = failed(rows).length;
  const measured = rows.filter((r) => r.status !== 'not built yet').length;
  const pending = rows.length - measured;
  const notBuilt = pending ? `; ${pending} not measured (bench not built yet)` : '';
  return bad ? `FAILED: ${bad} of ${measured} targets missed${notBuilt}` : `all ${measured} targets met${notBuilt}`;
}

export function markdownTable(rows: readonly Row[]): string[] {
  const status = (s: RowStatus) => (s === 'met' ? 'met' : s === 'not built yet' ? 'not built yet' : `**${s}**`);
  return [
    '| what | measured | target | result |',
    '|---|---:|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.value} | ${r.target} | ${status(r.status)} |`),
  ];
}

/** A plain-text table for the terminal, columns padded. */
export function consoleTable(rows: readonly Row[]): string[] {
  const cells = [['what', 'measured', 'target', 'result'], ...rows.map((r) => [r.name, r.value, r.target, r.status])];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((cell, i) => (i === 1 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)];
}
