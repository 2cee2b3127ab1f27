import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { pgLiteral, preparedStatement } from '../../src/database/prepared.js';
import { onPostgres, useHarness } from '../support/harness.js';

/**
 * Named prepared statements (src/database/prepared.ts). On PGlite they are PREPAREd once per
 * instance and run with EXECUTE, their values written as literals: whatever a value holds comes
 * back as it went in, and nothing in it is read as SQL.
 */

const h = useHarness();

const echo = preparedStatement<{ text: string; count: number; flag: boolean; none: string | null }>(
  'tenure_test_echo',
  (p) => sql`SELECT ${p.text}::text AS text, ${p.count}::int AS count, ${p.flag}::boolean AS flag, ${p.none}::text AS none`,
);

const TRICKY = ["it's", 'back\\slash', "\\'; DROP TABLE projects; --", "E'x'", '$1 $$ $tag$', 'ünï 🎟 中文', '', ' spaces ', 'line\nbreak\ttab'];

describe(`prepared statements (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('gives back every string, number, boolean and null as sent, call after call', async () => {
    for (const [i, text] of TRICKY.entries()) {
      const row = rowsOf<{ text: string; count: number; flag: boolean; none: null }>(
        await echo.execute(h.database.db, { text, count: i - 4, flag: i % 2 === 0, none: null }),
      )[0];
      expect(row).toEqual({ text, count: i - 4, flag: i % 2 === 0, none: null });
    }
    const tables = rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'projects'`));
    expect(tables[0]!.n).toBe(1);
  });

  it('concurrent first calls prepare it once and all answer', async () => {
    const fresh = preparedStatement<{ n: number }>('tenure_test_concurrent', (p) => sql`SELECT ${p.n}::int + 1 AS n`);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, n) => fresh.execute(h.database.db, { n })));
    expect(answers.map((a) => rowsOf<{ n: number }>(a)[0]!.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

// PostgreSQL prepares it on each pooled connection through node-postgres (test/storage/extend-one.test.ts).
if (!onPostgres) {
  describe('prepared statements on the embedded database', () => {
    it('is prepared once per instance, and run with EXECUTE after', async () => {
      await echo.execute(h.database.db, { text: 'a', count: 1, flag: true, none: null });
      await echo.execute(h.database.db, { text: 'b', count: 2, flag: false, none: null });
      const prepared = rowsOf<{ name: string; statement: string }>(
        await h.database.db.execute(sql`SELECT name, statement FROM pg_prepared_statements WHERE name = 'tenure_test_echo'`),
      );
      expect(prepared).toHaveLength(1);
      expect(prepared[0]!.statement).toMatch(/^PREPARE tenure_test_echo AS SELECT \$1::text/);
    });
  });
}

describe('pgLiteral', () => {
  it('refuses what no literal can hold', () => {
    expect(() => pgLiteral('a\0b')).toThrow(/NUL/);
    expect(() => pgLiteral(Number.NaN)).toThrow(/finite/);
    expect(() => pgLiteral(Number.POSITIVE_INFINITY)).toThrow(/finite/);
    expect(() => pgLiteral({} as never)).toThrow(/no SQL literal/);
  });

  it('doubles quotes and backslashes inside an escape string', () => {
    expect(pgLiteral("a'b\\c")).toBe("E'a''b\\\\c'");
  });
});
