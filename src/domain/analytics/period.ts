import { AppError } from '../errors.js';

/**
 * The period of a money-and-growth view (docs/analytics.md): whole UTC days [from, to), cut into
 * intervals (UTC days, ISO weeks from Monday, calendar months), the first and last clipped to the
 * period. Pure: the clock's now comes in.
 */

export const INTERVALS = ['day', 'week', 'month'] as const;
export type AnalyticsInterval = (typeof INTERVALS)[number];

/** The most intervals one view holds: two years of days. */
export const MAX_BUCKETS = 731;
export const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

export interface Period {
  from: Date;
  to: Date;
  interval: AnalyticsInterval;
  /** The intervals' starts and ends, in order; the first starts at from, the last ends at to. */
  buckets: { start: Date; end: Date }[];
}

const startOfDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);

/** The start of the interval after the one `d` (a UTC midnight) is in. */
function nextStart(d: Date, interval: AnalyticsInterval): Date {
  if (interval === 'day') return new Date(d.getTime() + DAY_MS);
  if (interval === 'week') {
    const weekday = (d.getUTCDay() + 6) % 7; // Monday 0
    return new Date(d.getTime() + (7 - weekday) * DAY_MS);
  }
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

const invalid = (message: string) => new AppError('VALIDATION_ERROR', message);

/**
 * The period a request names; `from`/`to` undefined take the defaults (the 30 days ending with
 * today, by day). Throws a 422 naming what is wrong: an instant that is not a UTC midnight, `to`
 * after the end of today, `from` not before `to`, more than MAX_BUCKETS intervals.
 */
export function periodOf(input: { from?: Date; to?: Date; interval?: AnalyticsInterval }, now: Date): Period {
  const interval = input.interval ?? 'day';
  const endOfToday = new Date(startOfDay(now).getTime() + DAY_MS);
  for (const [name, value] of [['from', input.from], ['to', input.to]] as const) {
    if (value !== undefined && value.getTime() % DAY_MS !== 0) {
      throw invalid(`${name} must be a UTC midnight (YYYY-MM-DDT00:00:00.000Z): the figures are kept per UTC day`);
    }
  }
  const to = input.to ?? endOfToday;
  if (to.getTime() > endOfToday.getTime()) throw invalid(`to must not be after the end of today (${endOfToday.toISOString()})`);
  const from = input.from ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw invalid('from must be before to');
  const buckets: Period['buckets'] = [];
  for (let start = from; start.getTime() < to.getTime(); ) {
    if (buckets.length === MAX_BUCKETS) {
      throw invalid(`the period holds more than ${MAX_BUCKETS} intervals of a ${interval}: choose a shorter period or a longer interval`);
    }
    const next = nextStart(start, interval);
    const end = next.getTime() < to.getTime() ? next : to;
    buckets.push({ start, end });
    start = end;
  }
  return { from, to, interval, buckets };
}

/** A UTC midnight as the store's date (`YYYY-MM-DD`). */
export const dayOf = (d: Date) => d.toISOString().slice(0, 10);
