import { parseInstant } from '../instant.js';
import type { StagedMembership } from './membership-import.js';

/**
 * One row of a membership import (membership-import.ts) at a time: the header's columns, a
 * cell's instant and name, the reasons a row is rejected for.
 */

/** The file cannot be imported at all (its header names a column the import does not know). */
export class ImportFormatError extends Error {}

const dateHint = (column: string) => `${column} must be a 13-digit Unix timestamp in milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ`;
export const END_DATE_HINT = dateHint('end_date');
export const START_DATE_HINT = dateHint('start_date');
export const START_AFTER_END = 'start_date must not be after end_date';
/** The API's bounds for a name (memberships.schemas.ts): 1 to 200 characters, no NUL, no half surrogate pair. */
export const NAME_HINT = 'user_name must be at most 200 characters, without NUL characters';
const MAX_NAME = 200;
// NUL, or a surrogate not part of a pair (in unicode mode the class matches only those): PostgreSQL
// cannot store either as text.
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for.
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** A CSV cell holds text: 13 digits mean milliseconds, anything else must be the ISO form. */
export function parseCsvInstant(cell: string): Date | null {
  return parseInstant(/^\d{13}$/.test(cell) ? Number(cell) : cell);
}

export const COLUMNS = ['user_id', 'end_date'] as const;
const OPTIONAL = ['plan_id', 'user_name', 'start_date'] as const;

/** A row that passed validation: the membership it stages, before its status is decided, and its line as the file had it. */
export type ParsedRow = Omit<StagedMembership, 'status'> & { text: string };

/** Each column's position in a row, -1 for an optional one the file does not have. */
export interface Columns {
  userId: number;
  endDate: number;
  planId: number;
  userName: number;
  startDate: number;
}

/** A name cell as the API would take it: empty means none given; null when it is not a name the API would store. */
export function nameOf(cell: string): string | null | undefined {
  if (cell === '') return undefined;
  // Code points, as the API's schema counts them.
  let length = 0;
  for (const _ of cell) if (++length > MAX_NAME) return null;
  return UNSTORABLE.test(cell) ? null : cell;
}

/** The columns' positions from a header line, or why the file cannot be imported. */
export function columnsOf(fields: readonly string[]): Columns {
  const names = fields.map((f) => f.toLowerCase());
  const known: readonly string[] = [...COLUMNS, ...OPTIONAL];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new ImportFormatError(`unknown column ${unknown.map((u) => `"${u}"`).join(', ')} in the header (the columns are ${known.join(', ')})`);
  for (const c of COLUMNS) if (!names.includes(c)) throw new ImportFormatError(`the header has no ${c} column`);
  const seen = new Set(names);
  if (seen.size !== names.length) throw new ImportFormatError('the header names a column twice');
  return {
    userId: names.indexOf('user_id'),
    endDate: names.indexOf('end_date'),
    planId: names.indexOf('plan_id'),
    userName: names.indexOf('user_name'),
    startDate: names.indexOf('start_date'),
  };
}
