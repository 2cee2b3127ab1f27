import { describe, expect, it } from 'vitest';
import type { StagedMembership } from '../domain/memberships/membership-import.js';
import { copyBuffer } from './membership-import.store.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** The staged rows as text (UTF-8), each split into its columns. */
const columns = (buffer: Buffer) =>
  buffer
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));

describe('the import staging rows (COPY text)', () => {
  it('one line per row: line, user id, epoch ms, ISO end date, status, membership id, event id, plan id, start ms, ISO start, name (\\N for none)', () => {
    const end = new Date('2027-03-04T05:06:07.089Z');
    const start = new Date('2026-01-02T03:04:05.006Z');
    const rows: StagedMembership[] = [
      { line: 2, userId: '123', endDate: end, planId: null, startDate: null, userName: null, status: 'active' },
      {
        line: 3,
        userId: '9'.repeat(32),
        endDate: new Date(9_999_999_999_999),
        planId: '00000000-0000-4000-8000-000000000001',
        startDate: start,
        userName: 'Zoë',
        status: 'expired',
      },
    ];
    const staged = columns(copyBuffer(rows));
    expect(staged.map((c) => c.slice(0, 5))).toStrictEqual([
      ['2', '123', String(end.getTime()), '2027-03-04T05:06:07.089Z', 'active'],
      ['3', '9'.repeat(32), '9999999999999', '2286-11-20T17:46:39.999Z', 'expired'],
    ]);
    expect(staged.map((c) => c[7])).toStrictEqual(['\\N', '00000000-0000-4000-8000-000000000001']);
    expect(staged.map((c) => c.slice(8))).toStrictEqual([
      ['\\N', '\\N', '\\N'],
      [String(start.getTime()), '2026-01-02T03:04:05.006Z', 'Zoë'],
    ]);
    for (const c of staged) {
      expect(c).toHaveLength(11);
      expect(c[5]).toMatch(new RegExp(`^${UUID}$`));
      expect(c[6]).toMatch(new RegExp(`^${UUID}$`));
    }
    expect(new Set(staged.flatMap((c) => [c[5], c[6]])).size).toBe(4);
  });

  it('rows longer than the room set aside for them grow the buffer, keeping every row whole', () => {
    // Longer than any valid user id: the buffer's room is a guess, not a limit.
    const rows: StagedMembership[] = Array.from({ length: 50 }, (_, i) => ({
      line: i + 2,
      userId: String(i).repeat(400),
      endDate: new Date(1e12 + i),
      planId: null,
      startDate: null,
      userName: i % 2 === 0 ? null : `名前 ${i}`,
      status: 'active' as const,
    }));
    const staged = columns(copyBuffer(rows));
    expect(staged.map((c) => [c[0], c[1], c[2], c[10]])).toStrictEqual(rows.map((r) => [String(r.line), r.userId, String(r.endDate.getTime()), r.userName ?? '\\N']));
  });

  it('escapes what COPY reads as syntax in a name (backslash, tab, carriage return), so it arrives as it was', () => {
    const name = 'a\\b\tc\rd \\N';
    const row: StagedMembership = { line: 2, userId: '1', endDate: new Date(1e12), planId: null, startDate: null, userName: name, status: 'active' };
    const [staged] = columns(copyBuffer([row]));
    expect(staged).toHaveLength(11);
    expect(staged![10]).toBe('a\\\\b\\tc\\rd \\\\N');
  });

  it('no rows, no bytes', () => {
    expect(copyBuffer([]).length).toBe(0);
  });
});
