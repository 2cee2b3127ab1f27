import { describe, expect, it } from 'vitest';
import { instantOfWall, offsetSeconds, parseOffsets, parseQuietHours, quietHoursEnd } from './reminder-rules.js';

/** The pure rules of reminders (src/domain/lifecycle/reminder-rules.ts): offsets, quiet hours across midnight and daylight saving. */

const at = (s: string) => new Date(s);
const quiet = (v: string) => parseQuietHours(v)!;

describe('offsets', () => {
  it('reads days and hours, up to 90 days', () => {
    expect(offsetSeconds('7d')).toBe(604_800);
    expect(offsetSeconds('12h')).toBe(43_200);
    expect(offsetSeconds('90d')).toBe(7_776_000);
    for (const bad of ['91d', '0d', '1w', '1.5d', ' 1d', 'd', '01d', '3D']) expect(offsetSeconds(bad), bad).toBeNull();
  });

  it('stores them furthest first, one per duration; refuses anything else whole', () => {
    expect(parseOffsets('k', ['1d', '12h', '7d', '24h'])).toStrictEqual({ ok: true, value: ['7d', '1d', '12h'] });
    expect(parseOffsets('k', [])).toStrictEqual({ ok: true, value: [] });
    for (const bad of [['1d', 3], '1d', null, ['1d', 'soon'], Array.from({ length: 11 }, (_, i) => `${i + 1}h`)]) {
      expect(parseOffsets('k', bad).ok, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('quiet hours', () => {
  it('parses HH:MM-HH:MM; the same time twice is no window', () => {
    expect(parseQuietHours('22:00-07:30')).toStrictEqual({ start: 1320, end: 450 });
    for (const bad of ['22:00-22:00', '24:00-08:00', '7:00-08:00', '22:00 - 08:00']) expect(parseQuietHours(bad), bad).toBeNull();
  });

  it('across midnight: held until the morning after, or the same morning after midnight; outside, not held', () => {
    expect(quietHoursEnd(at('2030-01-01T23:00:00Z'), quiet('22:00-08:00'), 'UTC')).toStrictEqual(at('2030-01-02T08:00:00Z'));
    expect(quietHoursEnd(at('2030-01-02T03:00:00Z'), quiet('22:00-08:00'), 'UTC')).toStrictEqual(at('2030-01-02T08:00:00Z'));
    expect(quietHoursEnd(at('2030-01-02T08:00:00Z'), quiet('22:00-08:00'), 'UTC')).toBeNull();
    expect(quietHoursEnd(at('2030-01-02T12:00:00Z'), quiet('22:00-08:00'), 'UTC')).toBeNull();
    expect(quietHoursEnd(at('2030-01-02T12:00:00Z'), quiet('09:00-17:00'), 'UTC')).toStrictEqual(at('2030-01-02T17:00:00Z'));
  });

  it('in the project\'s zone, through the spring change in Berlin (29 March 2026: 02:00 CET → 03:00 CEST)', () => {
    // 23:00 CET on the 28th: quiet until 08:00 CEST on the 29th, 06:00 UTC (the night is an hour shorter).
    expect(quietHoursEnd(at('2026-03-28T22:00:00Z'), quiet('22:00-08:00'), 'Europe/Berlin')).toStrictEqual(at('2026-03-29T06:00:00Z'));
    // An end inside the skipped hour: the first instant at or after it, 03:00 CEST.
    expect(quietHoursEnd(at('2026-03-28T23:30:00Z'), quiet('00:00-02:30'), 'Europe/Berlin')).toStrictEqual(at('2026-03-29T01:00:00Z'));
  });

  it('through the autumn change in Berlin (25 October 2026: 03:00 CEST → 02:00 CET)', () => {
    // 23:00 CEST on the 24th: quiet until 08:00 CET on the 25th, 07:00 UTC (the night is an hour longer).
    expect(quietHoursEnd(at('2026-10-24T21:00:00Z'), quiet('22:00-08:00'), 'Europe/Berlin')).toStrictEqual(at('2026-10-25T07:00:00Z'));
    // An end in the repeated hour: its first occurrence, 02:30 CEST.
    expect(instantOfWall(Date.UTC(2026, 9, 25, 2, 30), 'Europe/Berlin')).toBe(Date.parse('2026-10-25T00:30:00Z'));
    // Inside the repeated hour's second pass (02:15 CET) with quiet 01:00-03:00: held until 03:00 CET.
    expect(quietHoursEnd(at('2026-10-25T01:15:00Z'), quiet('01:00-03:00'), 'Europe/Berlin')).toStrictEqual(at('2026-10-25T02:00:00Z'));
  });

  it('across the date line (Pacific/Auckland) and in a zone without changes (Asia/Kolkata, +05:30)', () => {
    expect(quietHoursEnd(at('2030-01-01T17:00:00Z'), quiet('21:00-07:00'), 'Asia/Kolkata')).toStrictEqual(at('2030-01-02T01:30:00Z'));
    expect(quietHoursEnd(at('2030-01-01T10:00:00Z'), quiet('22:00-07:00'), 'Pacific/Auckland')).toStrictEqual(at('2030-01-01T18:00:00Z'));
  });
});
