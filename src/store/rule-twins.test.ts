import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { activeAt, desiredAccessSql, statusAt } from './rule-twins.js';

/**
 * The SQL twin of isActiveAt (src/domain/memberships/active.ts). What it answers on a database is
 * proven where it is used: statuses (test/http/membership-*), the sweep
 * (test/storage/expiry.sweeper.test.ts), grants (test/storage/access-plan.test.ts).
 */
describe('activeAt: the SQL of "active at"', () => {
  const dialect = new PgDialect();
  const at = new Date('2030-01-01T00:00:00.000Z');

  it('compares the end date with the instant given, bound as a parameter (never the database’s now())', () => {
    const active = dialect.sqlToQuery(activeAt(sql`m.end_date`, at));
    expect(active.sql).toBe('(m.end_date > $1::timestamptz)');
    expect(active.params).toStrictEqual([at.toISOString()]);
  });

  it('takes a prepared statement’s placeholder as the instant; the status reads it', () => {
    const status = dialect.sqlToQuery(statusAt(sql`m.end_date`, sql.raw('$9')));
    expect(status.sql).toBe("CASE WHEN (m.end_date > $9::timestamptz) THEN 'active' ELSE 'expired' END");
  });

  describe('desiredAccessSql', () => {
    it('the SQL twin tests the same three facts, in that order, and answers the same two values', () => {
      // The planner's statement evaluates it (test/storage/access-plan.test.ts proves the outcomes).
      const query = new PgDialect().sqlToQuery(
        desiredAccessSql({ active: sql`m.end_date > ${'2030-01-01T00:00:00.000Z'}::timestamptz`, enabled: sql`t.is_enabled`, banned: sql`b.yes` }),
      );
      expect(query.sql).toBe("CASE WHEN m.end_date > $1::timestamptz AND t.is_enabled AND NOT b.yes THEN 'granted' ELSE 'revoked' END");
      expect(query.params).toStrictEqual(['2030-01-01T00:00:00.000Z']);
    });
  });
});
