import { AppError } from './errors.js';

/**
 * The two accepted forms of a point in time (docs/api-contract.md, "`extend`"):
 * an integer of exactly 13 digits (Unix milliseconds), or a string `YYYY-MM-DDTHH:MM:SS.mmmZ`
 * naming a real calendar instant. Nothing is coerced: "1767225600000" (a string) and 1.7e12
 * written with a fraction are both refused.
 */

const ISO_MS_Z = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;

/** Parses `value` into a Date, or returns null when it is in neither accepted form. */
export function parseInstant(value: unknown): Date | null {
  if (typeof value === 'number') {
    // 13 digits: 1_000_000_000_000 (2001-09-09) up to 9_999_999_999_999 (2286-11-20).
    if (!Number.isSafeInteger(value) || value < 1e12 || value > 9_999_999_999_999) return null;
    return new Date(value);
  }
  if (typeof value !== 'string') return null;
  const m = ISO_MS_Z.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1).map(Number) as [
    number, number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  // Not Date.UTC: it reads years 0–99 as 1900–1999, so "0050-…" would fail the round trip below
  // and get the format error instead of the not-future one.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  // The calendar rolls Feb 30 over into March: a real date survives the round trip unchanged.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date;
}

/** The original API's two-entry 422 (docs/errors.md): first the number option, then the string option. */
export function instantFormatError(field: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid ${field}`, [
    {
      message: `${field} as a number must be a Unix timestamp in milliseconds with exactly 13 digits`,
      error_code: 'VALIDATION_ERROR',
    },
    {
      message: `${field} as a string must be a UTC ISO-8601 datetime with exactly three millisecond digits (YYYY-MM-DDTHH:MM:SS.mmmZ)`,
      error_code: 'VALIDATION_ERROR',
    },
  ]);
}

/** The original API's error-object 422 (docs/errors.md) for a well-formed instant that is not in the future. */
export function notFutureError(field: string): AppError {
  return new AppError('VALIDATION_ERROR', `${field} must be a future timestamp`);
}

/**
 * Validates a client-supplied instant that must lie strictly after `now`.
 * Returns the Date, or the AppError of the matching 422 shape.
 */
export function parseFutureInstant(value: unknown, now: Date, field: string): Date | AppError {
  const date = parseInstant(value);
  if (!date) return instantFormatError(field);
  if (date.getTime() <= now.getTime()) return notFutureError(field);
  return date;
}

/** The one wire format of instants: `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export const formatInstant = (date: Date): string => date.toISOString();
