import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import { formatInstant, parseFutureInstant, parseInstant } from './instant.js';

/**
 * The two accepted forms of `extend` (docs/api-contract.md, "`extend`"): an integer of
 * exactly 13 digits, or `YYYY-MM-DDTHH:MM:SS.mmmZ` naming a real calendar instant. "Now" is
 * injected, so nothing here depends on the machine's clock.
 */

const NOW = new Date('2026-06-01T12:00:00.000Z');
const NOW_MS = NOW.getTime();

/** [what, value, the instant it names in ms] — every one of these is well formed. */
const WELL_FORMED: [string, unknown, number][] = [
  ['a 13-digit millisecond number', 1_767_225_600_000, Date.UTC(2026, 0, 1)],
  ['the smallest 13-digit number', 1_000_000_000_000, 1_000_000_000_000],
  ['the largest 13-digit number', 9_999_999_999_999, 9_999_999_999_999],
  ['a float that is a whole number (1.7672256e12)', 1.7672256e12, Date.UTC(2026, 0, 1)],
  ['an ISO string with three ms digits', '2026-01-01T00:00:00.000Z', Date.UTC(2026, 0, 1)],
  ['an ISO string with non-zero ms', '2026-07-04T08:09:10.123Z', Date.UTC(2026, 6, 4, 8, 9, 10, 123)],
  ['the last millisecond of a year', '2026-12-31T23:59:59.999Z', Date.UTC(2026, 11, 31, 23, 59, 59, 999)],
  ['Feb 29 of a leap year (2028)', '2028-02-29T00:00:00.000Z', Date.UTC(2028, 1, 29)],
  ['Feb 29 of a leap century (2000)', '2000-02-29T12:00:00.000Z', Date.UTC(2000, 1, 29, 12)],
  ['Apr 30', '2027-04-30T00:00:00.000Z', Date.UTC(2027, 3, 30)],
  ['the largest 4-digit year', '9999-12-31T23:59:59.999Z', Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
  // Year 0000 is 1 BC in ISO 8601 and allowed by RFC 3339's 4DIGIT year.
  ['year 0000', '0000-01-01T00:00:00.000Z', -62_167_219_200_000],
  ['year 0050 (not read as 1950)', '0050-06-15T00:00:00.000Z', -60_575_040_000_000],
];

/** Everything here must be refused as "neither accepted form". */
const MALFORMED: [string, unknown][] = [
  ['12 digits', 999_999_999_999],
  ['14 digits', 10_000_000_000_000],
  ['a fraction of a millisecond', 1_767_225_600_000.5],
  ['a negative 13-digit number', -1_767_225_600_000],
  ['zero', 0],
  ['negative zero', -0],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['1e21', 1e21],
  ['Number.MAX_SAFE_INTEGER + 2', Number.MAX_SAFE_INTEGER + 2],
  ['a bigint', 1_767_225_600_000n],
  ['a numeric string', '1767225600000'],
  ['an ISO string with a +00:00 offset', '2026-01-01T00:00:00.000+00:00'],
  ['an ISO string without Z', '2026-01-01T00:00:00.000'],
  ['an ISO string with no fraction', '2026-01-01T00:00:00Z'],
  ['an ISO string with 1 fraction digit', '2026-01-01T00:00:00.1Z'],
  ['an ISO string with 2 fraction digits', '2026-01-01T00:00:00.12Z'],
  ['an ISO string with 4 fraction digits', '2026-01-01T00:00:00.1234Z'],
  ['a lowercase z', '2026-01-01T00:00:00.000z'],
  ['a lowercase t', '2026-01-01t00:00:00.000Z'],
  ['a space instead of T', '2026-01-01 00:00:00.000Z'],
  ['a date only', '2026-01-01'],
  ['Feb 30', '2026-02-30T00:00:00.000Z'],
  ['Feb 29 of a non-leap year (2027)', '2027-02-29T00:00:00.000Z'],
  ['Feb 29 of a non-leap century (2100)', '2100-02-29T00:00:00.000Z'],
  ['Apr 31', '2027-04-31T00:00:00.000Z'],
  ['month 13', '2027-13-01T00:00:00.000Z'],
  ['month 00', '2027-00-10T00:00:00.000Z'],
  ['day 00', '2027-01-00T00:00:00.000Z'],
  ['day 32', '2027-01-32T00:00:00.000Z'],
  ['hour 24', '2027-01-01T24:00:00.000Z'],
  ['minute 60', '2027-01-01T00:60:00.000Z'],
  ['second 60 (leap second)', '2016-12-31T23:59:60.000Z'],
  ['a 5-digit year', '12026-01-01T00:00:00.000Z'],
  ['a negative year', '-2026-01-01T00:00:00.000Z'],
  ['non-ASCII digits', '２０２６-01-01T00:00:00.000Z'],
  ['a leading space', ' 2026-01-01T00:00:00.000Z'],
  ['a trailing space', '2026-01-01T00:00:00.000Z '],
  ['a trailing newline', '2026-01-01T00:00:00.000Z\n'],
  ['the empty string', ''],
  ['null', null],
  ['undefined', undefined],
  ['true', true],
  ['false', false],
  ['an empty array', []],
  ['an array holding a valid number', [1_767_225_600_000]],
  ['an array holding a valid string', ['2026-01-01T00:00:00.000Z']],
  ['an empty object', {}],
  ['an object holding a valid instant', { extend: '2026-01-01T00:00:00.000Z' }],
  ['a Date object', new Date('2027-01-01T00:00:00.000Z')],
];

describe('parseInstant', () => {
  it.each(WELL_FORMED)('accepts %s', (_what, value, ms) => {
    const date = parseInstant(value);
    expect(date).toBeInstanceOf(Date);
    expect(date!.getTime()).toBe(ms);
  });

  it.each(MALFORMED)('refuses %s', (_what, value) => {
    expect(parseInstant(value)).toBeNull();
  });
});

describe('parseFutureInstant', () => {
  it.each([
    ['one millisecond after now, as a number', NOW_MS + 1, NOW_MS + 1],
    ['one millisecond after now, as a string', '2026-06-01T12:00:00.001Z', NOW_MS + 1],
    ['a year after now, as a number', NOW_MS + 365 * 86_400_000, NOW_MS + 365 * 86_400_000],
    ['the largest 13-digit number', 9_999_999_999_999, 9_999_999_999_999],
  ])('returns the Date for %s', (_what, value, ms) => {
    const result = parseFutureInstant(value, NOW, 'extend');
    expect(result).toBeInstanceOf(Date);
    expect((result as Date).getTime()).toBe(ms);
  });

  it.each([
    ['exactly now, as a number', NOW_MS],
    ['exactly now, as a string', '2026-06-01T12:00:00.000Z'],
    ['one millisecond before now', NOW_MS - 1],
    ['a past string instant', '2020-01-01T00:00:00.000Z'],
    ['the smallest 13-digit number (2001)', 1_000_000_000_000],
    ['year 0000', '0000-01-01T00:00:00.000Z'],
  ])('refuses %s with the not-future error object', (_what, value) => {
    const result = parseFutureInstant(value, NOW, 'extend');
    expect(result).toBeInstanceOf(AppError);
    const error = result as AppError;
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.status).toBe(422);
    // The error-object shape (docs/errors.md): no `errors` list.
    expect(error.errors).toBeUndefined();
    expect(error.message).toContain('future');
    expect(error.message).toBe('extend must be a future timestamp');
  });

  it.each(MALFORMED)('refuses %s with the two-entry format error', (_what, value) => {
    const result = parseFutureInstant(value, NOW, 'extend');
    expect(result).toBeInstanceOf(AppError);
    const error = result as AppError;
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.status).toBe(422);
    expect(error.errors).toHaveLength(2);
    const [numberOption, stringOption] = error.errors!;
    // First the number option, then the string option (docs/errors.md).
    expect(numberOption).toStrictEqual({
      message: 'extend as a number must be a Unix timestamp in milliseconds with exactly 13 digits',
      error_code: 'VALIDATION_ERROR',
    });
    expect(stringOption).toStrictEqual({
      message: 'extend as a string must be a UTC ISO-8601 datetime with exactly three millisecond digits (YYYY-MM-DDTHH:MM:SS.mmmZ)',
      error_code: 'VALIDATION_ERROR',
    });
  });

  it('names the field it was given in both shapes', () => {
    const format = parseFutureInstant('soon', NOW, 'end_date') as AppError;
    expect(format.errors!.map((e) => e.message.split(' ')[0])).toStrictEqual(['end_date', 'end_date']);
    const past = parseFutureInstant(NOW_MS - 1, NOW, 'end_date') as AppError;
    expect(past.message).toBe('end_date must be a future timestamp');
  });

  it('checks the format before the future rule (a malformed past value is a format error)', () => {
    const result = parseFutureInstant('2020-01-01T00:00:00Z', NOW, 'extend') as AppError;
    expect(result.errors).toHaveLength(2);
  });
});

describe('formatInstant', () => {
  it.each([
    [Date.UTC(2026, 0, 1), '2026-01-01T00:00:00.000Z'],
    [9_999_999_999_999, '2286-11-20T17:46:39.999Z'],
    [Date.UTC(2028, 1, 29, 23, 59, 59, 5), '2028-02-29T23:59:59.005Z'],
  ])('writes %d as %s', (ms, text) => {
    expect(formatInstant(new Date(ms))).toBe(text);
    // What it writes, parseInstant reads back to the same instant.
    expect(parseInstant(text)!.getTime()).toBe(ms);
  });
});
