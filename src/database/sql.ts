import { sql, type SQL } from 'drizzle-orm';

/** SQL pieces every store uses; table-specific SQL stays with its store. */

/** An instant of the app clock as a timestamptz parameter. */
export const at = (d: Date): SQL => sql`${d.toISOString()}::timestamptz`;

/** An instant column as the API shows it: `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export const iso = (column: SQL) => sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
