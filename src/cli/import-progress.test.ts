import { describe, expect, it } from 'vitest';
import { ImportProgress } from './import-progress.js';

/** The progress line's arithmetic and throttling, on a clock the test moves. */
function setup(inPlace = false) {
  let now = 1_000_000;
  let read = 0;
  const written: string[] = [];
  const progress = new ImportProgress({
    totalBytes: 4 * 1024 * 1024,
    bytesRead: () => read,
    sink: { write: (t: string) => written.push(t) },
    inPlace,
    intervalMs: 1_000,
    now: () => now,
  });
  return {
    progress,
    written,
    at(ms: number, bytes: number) {
      now = 1_000_000 + ms;
      read = bytes;
    },
  };
}

describe('ImportProgress', () => {
  it('prints rows/s, the share of the file read and an ETA from bytes', () => {
    const p = setup();
    p.at(2_000, 1024 * 1024); // a quarter of the file in 2 s: 6 s to go
    p.progress.update(20_000, 19_990);
    expect(p.written).toEqual(['import: 20,000 rows read, 19,990 inserted, 10,000 rows/s, 25% of 4.0 MiB, ETA 6s\n']);
  });

  it('prints at most once per interval, and always at the end', () => {
    const p = setup();
    p.at(500, 1000);
    p.progress.update(10, 10);
    expect(p.written).toHaveLength(0);
    p.at(1_000, 2000);
    p.progress.update(20, 20);
    p.at(1_900, 3000);
    p.progress.update(30, 30);
    expect(p.written).toHaveLength(1);
    p.at(125_000, 4 * 1024 * 1024);
    p.progress.finish(50_000, 49_000);
    expect(p.written[1]).toBe('import: 50,000 rows read, 49,000 inserted, 400 rows/s, 100% of 4.0 MiB, done in 2m05s\n');
  });

  it('rewrites one line in place on a terminal', () => {
    const p = setup(true);
    p.at(1_000, 2 * 1024 * 1024);
    p.progress.update(10, 10);
    p.at(2_000, 4 * 1024 * 1024);
    p.progress.finish(20, 20);
    const ERASE = '\u001b[K';
    expect(p.written[0]!.startsWith('\r') && p.written[0]!.endsWith(`ETA 1s${ERASE}`), p.written[0]).toBe(true);
    expect(p.written[1]!.startsWith('\r') && p.written[1]!.endsWith(`done in 2s${ERASE}\n`), p.written[1]).toBe(true);
  });
});
