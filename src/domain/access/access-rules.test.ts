import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { desiredAccess, desiredAccessSql, grantsAccess, type GrantFacts } from './access-rules.js';

const every: GrantFacts[] = [true, false].flatMap((active) =>
  [true, false].flatMap((enabled) => [true, false].map((banned) => ({ active, enabled, banned }))),
);

describe('access rules: what a member should hold on a target', () => {
  it('granted only while active, on an enabled target, and not banned; revoked in every other case', () => {
    const granted = every.filter(grantsAccess);
    expect(granted).toStrictEqual([{ active: true, enabled: true, banned: false }]);
    for (const f of every) expect(desiredAccess(f)).toBe(granted.includes(f) ? 'granted' : 'revoked');
  });

  it('the SQL twin tests the same three facts, in that order, and answers the same two values', () => {
    // The planner's statement evaluates it (test/storage/access-plan.test.ts proves the outcomes).
    const query = new PgDialect().sqlToQuery(
      desiredAccessSql({ active: sql`m.end_date > ${'2030-01-01T00:00:00.000Z'}::timestamptz`, enabled: sql`t.is_enabled`, banned: sql`b.yes` }),
    );
    expect(query.sql).toBe("CASE WHEN m.end_date > $1::timestamptz AND t.is_enabled AND NOT b.yes THEN 'granted' ELSE 'revoked' END");
    expect(query.params).toStrictEqual(['2030-01-01T00:00:00.000Z']);
  });
});
