import { fail, ok, type Result } from '../errors.js';

/**
 * The extend form of a member's page (docs/dashboard-members.md, "Actions"): days to add, or an
 * end date as a browser's date and time fields send it, read as UTC.
 */

export const MAX_DAYS = 3_650;
const DAY_MS = 86_400_000;

export interface NewEnd {
  endDate: Date;
  /** The days added; null when an end date was set. */
  days: number | null;
}

/** `2030-01-02`, `2030-01-02T10:00` or `2030-01-02T10:00:30` (a browser's date and datetime-local fields), as UTC. */
const DATE_FIELD = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * The new end date: days are added to the current end, or to now when that has passed (an expired
 * member gets the days from today); a set date must be a real date in the future.
 */
export function parseNewEnd(form: { days?: unknown; end_date?: unknown }, currentEnd: Date, now: Date): Result<NewEnd> {
  const days = typeof form.days === 'string' ? form.days.trim() : '';
  const date = typeof form.end_date === 'string' ? form.end_date.trim() : '';
  if (days !== '' && date !== '') return fail('VALIDATION_ERROR', 'Give either days to add or an end date, not both');
  if (days !== '') {
    if (!/^\d{1,4}$/.test(days) || Number(days) < 1 || Number(days) > MAX_DAYS) return fail('VALIDATION_ERROR', `Days must be a whole number from 1 to ${MAX_DAYS}`);
    const from = Math.max(currentEnd.getTime(), now.getTime());
    return ok({ endDate: new Date(from + Number(days) * DAY_MS), days: Number(days) });
  }
  if (date === '') return fail('VALIDATION_ERROR', 'Give days to add or an end date');
  const m = DATE_FIELD.exec(date);
  if (!m) return fail('VALIDATION_ERROR', 'The end date must be a date (YYYY-MM-DD), with a time (HH:MM) if you like');
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1).map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const end = new Date(Date.UTC(year!, month! - 1, day!, hour, minute, second));
  const real = end.getUTCFullYear() === year && end.getUTCMonth() === month! - 1 && end.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  if (!real || year! < 1970) return fail('VALIDATION_ERROR', `${date} is not a real date`);
  if (end.getTime() <= now.getTime()) return fail('VALIDATION_ERROR', 'The end date must be in the future (use "End now" to end the membership)');
  return ok({ endDate: end, days: null });
}
