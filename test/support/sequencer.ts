import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Longest files first, within each project. Vitest runs a project's files on shared workers and
 * starts the next project only when the last file of this one ends, so a long file that starts
 * late (a crash test of one case, small on disk) leaves the other workers idle until it ends.
 * Vitest's own order is by the durations it cached on this machine, else by file size, which a
 * clean clone (CI) only has; test/durations.json holds durations measured on a full run
 * (`npm run test:durations` after `npm test` writes it from Vitest's cache), used where this
 * machine has none. Files in neither come after, largest first.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const measured = readDurations();
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const keyOf = (f: TestSpecification) => `${f.project.name}:${f.moduleId.slice(root.length + 1)}`;
    const duration = (key: string) => cache.getFileTestResults(key)?.duration ?? measured[key] ?? 0;
    const size = (key: string) => cache.getFileStats(key)?.size ?? 0;
    return files
      .map((file) => ({ file, key: keyOf(file) }))
      .map((f) => ({ ...f, duration: duration(f.key), size: size(f.key) }))
      .sort((a, b) => b.duration - a.duration || b.size - a.size)
      .map((f) => f.file);
  }
}

export const DURATIONS_FILE = new URL('../durations.json', import.meta.url);

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}
