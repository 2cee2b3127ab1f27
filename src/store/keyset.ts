import { sql, type SQL } from 'drizzle-orm';

/**
 * Keyset pages (docs/idempotency-and-lists.md, "Cursor pages"): where a page ended, as the list's
 * sort column and the row's id, so the next page starts right after it by an index range scan,
 * whatever its depth, and rows inserted meanwhile neither shift nor repeat what follows.
 */
export interface ListKey {
  /** The sort column's instant as ISO 8601 UTC with microseconds (what the column holds, exactly). */
  at: string;
  id: string;
}

/** An instant column as ListKey's `at`: microseconds kept, whatever the session's time zone. */
export const keyText = (column: SQL) => sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The form keyText writes; anything else in a cursor was not written by it. */
export const KEY_AT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * The rows after `key` in (column, id) order, in `direction`. A row comparison on the index's
 * trailing columns: after the equalities of the WHERE (project, plan), PostgreSQL starts the
 * index scan at the key.
 */
export function afterListKey(alias: string, column: string, direction: 'ASC' | 'DESC', key: ListKey | null): SQL {
  if (key === null) return sql`true`;
  const cmp = sql.raw(direction === 'DESC' ? '<' : '>');
  return sql`(${sql.raw(`${alias}.${column}`)}, ${sql.raw(`${alias}.id`)}) ${cmp} (${key.at}::timestamptz, ${key.id}::uuid)`;
}

/** A page of `limit` from `rows` read with one more: the next page's key when there is one. */
export function pageOf<T>(rows: { k: string; id: string; item: T }[], limit: number): { items: T[]; next: ListKey | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { items: page.map((r) => r.item), next: rows.length > limit && last ? { at: last.k, id: last.id } : null };
}
