import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { MEASURED_PATHS, RESULTS_FILE } from './report.js';

/**
 * How old the figures in RESULTS.md are: for its top part and each bench's section, the commit it
 * was measured on and the commits touching src/, bench/ or drizzle/ that have landed since.
 */

export interface SectionAge {
  section: string;
  /** As written: `abc1234`, `abc1234-dirty` (or the older `abc1234+changes`), or null when none is stated. */
  commit: string | null;
  /** Commits since that touch the measured paths; null when the commit is not in this history. */
  since: string[] | null;
}

const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

function commitsSince(commit: string): string[] | null {
  try {
    const out = git('log', '--format=%h %s', `${commit}..HEAD`, '--', ...MEASURED_PATHS);
    return out ? out.split('\n') : [];
  } catch {
    return null;
  }
}

export async function sectionAges(file = RESULTS_FILE): Promise<SectionAge[]> {
  const text = await readFile(file, 'utf8');
  const first = text.search(/<!-- [\w-]+:begin/);
  const parts: [string, string][] = [['top (targets, per request)', first === -1 ? text : text.slice(0, first)]];
  for (const m of text.matchAll(/<!-- ([\w-]+):begin[\s\S]*?<!-- \1:end -->/g)) parts.push([m[1]!, m[0]]);
  return parts.map(([section, body]) => {
    const commit = /commit: ([0-9a-f]{7,40}(?:-dirty|\+changes)?)/.exec(body)?.[1] ?? null;
    return { section, commit, since: commit ? commitsSince(commit.replace(/(-dirty|\+changes)$/, '')) : null };
  });
}

const SHOWN = 5;

/** Lines for the terminal; the last one says whether anything is stale. */
export async function stalenessReport(file = RESULTS_FILE): Promise<string[]> {
  let ages: SectionAge[];
  try {
    ages = await sectionAges(file);
  } catch (err) {
    return [`bench/RESULTS.md: cannot read it (${String(err)})`];
  }
  const lines = ['bench/RESULTS.md, measured on:'];
  // Sections measured on one commit share one entry: a full run writes several at once.
  const groups = new Map<string | null, SectionAge[]>();
  for (const a of ages) groups.set(a.commit, [...(groups.get(a.commit) ?? []), a]);
  let stale = 0;
  for (const [commit, group] of groups) {
    const names = group.map((a) => a.section).join(', ');
    const since = group[0]!.since;
    const dirty = commit && /(-dirty|\+changes)$/.test(commit) ? ' (measured with uncommitted changes)' : '';
    if (!commit || since === null) {
      stale += group.length;
      lines.push(`  ${names}: ${commit ? `${commit}, which is not in this history` : 'no commit stated'}`);
    } else if (since.length === 0) {
      lines.push(`  ${names}: ${commit}, current${dirty}`);
    } else {
      stale += group.length;
      lines.push(`  ${names}: ${commit}, ${since.length} commit(s) touching src/ bench/ drizzle/ since${dirty}:`);
      lines.push(...since.slice(0, SHOWN).map((c) => `      ${c.length > 100 ? `${c.slice(0, 99)}…` : c}`));
      if (since.length > SHOWN) lines.push(`      … and ${since.length - SHOWN} more`);
    }
  }
  lines.push(
    stale
      ? `WARNING: ${stale} of ${ages.length} sections of bench/RESULTS.md may be stale: re-run \`npm run bench\` (or the section's own bench)`
      : 'bench/RESULTS.md: every section measured on the current commit',
  );
  return lines;
}
