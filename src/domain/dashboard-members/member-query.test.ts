import { describe, expect, it } from 'vitest';
import { encodeCursor, fieldsOf, parseMemberQuery } from './member-query.js';

describe('parseMemberQuery', () => {
  const refusal = (fields: Record<string, unknown>) => {
    const q = parseMemberQuery(fields);
    return q.ok ? 'accepted' : q.error.message;
  };

  it('empty fields are unset; a saved view brings its sort unless one is named', () => {
    expect(parseMemberQuery({ status: '', plan: '', q: '  ', sort: '' })).toStrictEqual({ ok: true, value: { sort: '-created', limit: 50, cursor: null } });
    const q = parseMemberQuery({ view: 'expiring_7d', q: ' AdA ', limit: '25' });
    expect(q.ok && q.value).toStrictEqual({ view: 'expiring_7d', sort: 'end_date', search: 'ada', limit: 25, cursor: null });
    expect(parseMemberQuery({ view: 'access_failed', sort: 'name' }).ok && parseMemberQuery({ view: 'access_failed', sort: 'name' })).toMatchObject({ value: { sort: 'name' } });
  });

  it('refuses what the table does not know, naming it', () => {
    expect(refusal({ colour: 'red' })).toBe('colour is not a filter of the members table');
    expect(refusal({ status: 'gold' })).toBe('status must be one of: active, in_grace, cancelling, trial, expired, banned');
    expect(refusal({ status: ['active', 'expired'] })).toBe('status must be given once');
    expect(refusal({ plan: 'gold' })).toBe('plan must be a plan id (a UUID)');
    expect(refusal({ sort: 'price' })).toBe('sort must be one of: -created, created, end_date, -end_date, name, -name');
    expect(refusal({ limit: '1000' })).toBe('limit must be one of: 25, 50, 100');
    expect(refusal({ q: 'x'.repeat(101) })).toBe('q (the search) must be at most 100 characters');
    expect(refusal({ after: 'bm9wZQ' })).toBe('after is not a page of this table: start from the first page');
    const c = encodeCursor('end_date', '2030-01-01 00:00:00+00', '5b0c2f2a-0000-4000-8000-000000000000');
    expect(refusal({ sort: 'end_date', after: c })).toBe('accepted');
    expect(refusal({ sort: 'created', after: c })).toBe('after is not a page of this table: start from the first page');
    expect(refusal({ sort: 'end_date', after: c, before: c })).toBe('after and before cannot both be given');
    expect(refusal({ sort: 'name', after: encodeCursor('name', 'ada', "1' OR 1=1") })).toBe('after is not a page of this table: start from the first page');
  });

  it('fieldsOf gives back the fields that are set', () => {
    expect(fieldsOf({ status: 'banned', search: 'ada', sort: '-created', limit: 50 })).toStrictEqual({ status: 'banned', q: 'ada', sort: '-created' });
  });
});
