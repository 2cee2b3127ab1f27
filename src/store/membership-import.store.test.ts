import { describe, expect, it } from 'vitest';
import type { StagedMembership } from '../domain/memberships/membership-import.js';
import { copyBuffer } from './membership-import.store.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** The staged rows as text, each split into its seven columns. */
const columns = (buffer: Buffer) =>
  buffer
    .toString('latin1')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));

describe('the import staging rows (COPY text)', () => {
  it('one line per row: line, user id, epoch ms, ISO end date, status, membership id, event id, plan id (\\N for none)', () => {
    const end = new Date('2027-03-04T05:06:07.089Z');
    const rows: StagedMembership[] = [
      { line: 2, userId: '123', endDate: end, planId: null, status: 'active' },
      { line: 3, userId: '9'.repeat(32), endDate: new Date(9_999_999_999_999), planId: '00000000-0000-4000-8000-000000000001', status: 'expired' },
    ];
    const staged = columns(copyBuffer(rows));
    expect(staged.map((c) => c.slice(0, 5))).toStrictEqual([
      ['2', '123', String(end.getTime()), '2027-03-04T05:06:07.089Z', 'active'],
      ['3', '9'.repeat(32), '9999999999999', '2286-11-20T17:46:39.999Z', 'expired'],
    ]);
    expect(staged.map((c) => c[7])).toStrictEqual(['\\N', '00000000-0000-4000-8000-000000000001']);
    for (const c of staged) {
      expect(c).toHaveLength(8);
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
      status: 'active' as const,
    }));
    const staged = columns(copyBuffer(rows));
    expect(staged.map((c) => [c[0], c[1], c[2]])).toStrictEqual(rows.map((r) => [String(r.line), r.userId, String(r.endDate.getTime())]));
  });

  it('no rows, no bytes', () => {
    expect(copyBuffer([]).length).toBe(0);
  });
});
