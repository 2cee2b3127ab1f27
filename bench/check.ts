import { stalenessReport } from './lib/staleness.js';

/**
 * `npm run bench:check`: says, for bench/RESULTS.md's top part and each bench's section, the commit
 * it was measured on and how many commits touching src/, bench/ or drizzle/ have landed since.
 * Measures nothing and takes well under a second. Exits 0 (a warning); `--strict` exits 1 when
 * any section is stale.
 */

const lines = await stalenessReport();
process.stdout.write(`${lines.join('\n')}\n`);
if (process.argv.includes('--strict') && lines.at(-1)?.startsWith('WARNING')) process.exitCode = 1;
