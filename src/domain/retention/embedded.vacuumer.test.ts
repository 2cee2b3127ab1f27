import { describe, expect, it } from 'vitest';
import type { TableActivity } from '../../store/maintenance.store.js';
import { dueTables, EMBEDDED_VACUUM_THRESHOLDS } from './embedded.vacuumer.js';

const quiet: TableActivity = { schema: 'public', table: 'quiet', live: 1_000_000, dead: 999, insertedSinceVacuum: 99_999, modifiedSinceAnalyze: 100_999, xidAge: 1_000 };

describe('dueTables', () => {
  it('takes a table past any threshold, the most dead rows first, and analyzes as autovacuum would', () => {
    const due = dueTables(
      [
        quiet,
        { ...quiet, table: 'marks', dead: 1_000 },
        { ...quiet, table: 'queue', live: 0, dead: 50_000, modifiedSinceAnalyze: 50_000 },
        { ...quiet, table: 'history', insertedSinceVacuum: 100_000 },
        { ...quiet, table: 'old', xidAge: 160_000_000 },
        { ...quiet, table: 'skewed', modifiedSinceAnalyze: 101_000 },
      ],
      EMBEDDED_VACUUM_THRESHOLDS,
    );
    expect(due.map((d) => [d.table, d.vacuum, d.analyze])).toStrictEqual([
      ['queue', true, true],
      ['marks', true, false],
      ['history', true, false],
      ['old', true, false],
      ['skewed', false, true],
    ]);
  });
});
