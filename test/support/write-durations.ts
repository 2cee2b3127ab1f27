import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DURATIONS_FILE } from './sequencer.js';

/**
 * Writes test/durations.json from the durations Vitest cached on the last full run
 * (node_modules/.vite/vitest/<hash>/results.json): files of a second or more, in whole
 * milliseconds, so the sequencer starts them first on a clean clone. Run after `npm test` with
 * DATABASE_URL and REDIS_URL set, so every project is measured.
 */
const cacheDir = path.join('node_modules', '.vite', 'vitest');
const caches = readdirSync(cacheDir, { withFileTypes: true }).filter((d) => d.isDirectory());
if (caches.length !== 1) throw new Error(`expected one Vitest cache in ${cacheDir}, found ${caches.length}: run npm test first`);
const { results } = JSON.parse(readFileSync(path.join(cacheDir, caches[0]!.name, 'results.json'), 'utf8')) as {
  results: [string, { duration: number }][];
};
const slow = results
  .filter(([, r]) => r.duration >= 1_000)
  .sort(([, a], [, b]) => b.duration - a.duration)
  .map(([key, r]) => [key, Math.round(r.duration)] as const);
writeFileSync(DURATIONS_FILE, `${JSON.stringify(Object.fromEntries(slow), null, 2)}\n`);
console.log(`${slow.length} files of a second or more written to test/durations.json`);
