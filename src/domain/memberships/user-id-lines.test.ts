import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UserIdLines } from './user-id-lines.js';

describe('UserIdLines', () => {
  it('answers as a Map of strings would, for any ids of 1 to 32 digits', () => {
    const digits = fc.stringMatching(/^[0-9]{1,32}$/);
    // Short ids and near-misses (a leading zero, one digit more) make collisions of the encoding likely to show.
    const id = fc.oneof(digits, fc.stringMatching(/^[0-9]{1,3}$/), fc.integer({ min: 0, max: 2000 }).map((n) => `0${n}`), fc.integer({ min: 0, max: 2000 }).map((n) => `1000000000${n}`));
    fc.assert(
      fc.property(fc.array(fc.tuple(id, fc.integer({ min: 1, max: 0xffffffff })), { maxLength: 400 }), fc.array(id, { maxLength: 50 }), (writes, probes) => {
        const lines = new UserIdLines(16);
        const map = new Map<string, number>();
        for (const [userId, line] of writes) {
          expect(lines.has(userId)).toBe(map.has(userId));
          lines.set(userId, line);
          map.set(userId, line);
        }
        expect(lines.size).toBe(map.size);
        for (const userId of [...map.keys(), ...probes]) expect(lines.get(userId)).toBe(map.get(userId));
      }),
      { numRuns: 300 },
    );
  });

  it('tells apart ids that differ only by leading zeros, length or the split at nine digits', () => {
    const lines = new UserIdLines();
    const ids = ['0', '00', '5', '05', '000000005', '1000000005', '10000000005', '999999999', '1000000000', '9999999999999999999', '10000000000000000000', '18446744073709551615'];
    ids.forEach((userId, i) => lines.set(userId, i + 1));
    expect(ids.map((userId) => lines.get(userId))).toStrictEqual(ids.map((_, i) => i + 1));
    expect(lines.get('50')).toBeUndefined();
    expect(lines.get('100000005')).toBeUndefined();
  });

  it('keeps 1,000,000 ids (an import of a million rows) and every line', () => {
    const lines = new UserIdLines();
    for (let i = 0; i < 1_000_000; i++) lines.set(String(1_000_000_000_000_000 + i * 7919), i + 2);
    expect(lines.size).toBe(1_000_000);
    for (let i = 0; i < 1_000_000; i += 997) expect(lines.get(String(1_000_000_000_000_000 + i * 7919))).toBe(i + 2);
    expect(lines.has(String(1_000_000_000_000_000 + 1))).toBe(false);
  });

  it('refuses a line that is not a whole number from 1 to 2^32 - 1, recording nothing', () => {
    const lines = new UserIdLines();
    for (const bad of [0, -1, 1.5, 2 ** 32, Number.NaN]) expect(() => lines.set('42', bad)).toThrow(RangeError);
    expect(lines.size).toBe(0);
    expect(lines.has('42')).toBe(false);
  });
});
