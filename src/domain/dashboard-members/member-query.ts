import { AppError, ok, type Result } from '../errors.js';

/**
 * What the dashboard's members table asks (docs/dashboard-members.md): a status, a plan, a search,
 * a saved view, a sort and a page. Read from the page's GET form, so every value arrives as text;
 * a value out of these is refused with a message naming it, never ignored (a misspelt filter must
 * not look like a working one).
 */

/** A member's one status, as the table shows it; `active` as a filter means any of the active kinds. */
export const MEMBER_STATUSES = ['active', 'in_grace', 'cancelling', 'trial', 'expired', 'banned'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

export const SAVED_VIEWS = ['expiring_7d', 'payment_failed', 'access_failed', 'not_linked'] as const;
export type SavedView = (typeof SAVED_VIEWS)[number];

export const MEMBER_SORTS = ['-created', 'created', 'end_date', '-end_date', 'name', '-name'] as const;
export type MemberSort = (typeof MEMBER_SORTS)[number];

/** Each saved view's sort when the form names none: the order its question is read in. */
export const VIEW_SORT: Record<SavedView, MemberSort> = {
  expiring_7d: 'end_date',
  payment_failed: 'end_date',
  access_failed: '-created',
  not_linked: '-created',
};

export const PAGE_SIZES = [25, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 50;
/** Shortest and longest search: one character is a prefix of everyone, 100 is more than any name. */
export const SEARCH_MAX = 100;

/** Where a page starts: after (next page) or before (previous page) a row's sort key. */
export interface PageCursor {
  direction: 'after' | 'before';
  /** The sort column's value as text (an instant as PostgreSQL prints it, or the name key). */
  key: string;
  /** The tie-breaker: the membership id (dates) or the user id (name). */
  id: string;
}

export interface MemberFilter {
  status?: MemberStatus;
  planId?: string;
  /** Lower-cased; matched as a prefix of the user id, the first name or the username. */
  search?: string;
  view?: SavedView;
}

export interface MemberQuery extends MemberFilter {
  sort: MemberSort;
  limit: number;
  cursor: PageCursor | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KNOWN = new Set(['status', 'plan', 'q', 'view', 'sort', 'limit', 'after', 'before']);

const bad = (message: string): Result<never> => ({ ok: false, error: new AppError('VALIDATION_ERROR', message) });

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): Result<T> {
  return (allowed as readonly string[]).includes(value) ? ok(value as T) : bad(`${name} must be one of: ${allowed.join(', ')}`);
}

/**
 * The table's query from the form's fields. Empty fields are "not set" (a GET form sends every
 * field, chosen or not); anything else must be a value the table knows.
 */
export function parseMemberQuery(fields: Record<string, unknown>): Result<MemberQuery> {
  const values: Record<string, string> = {};
  for (const [name, raw] of Object.entries(fields)) {
    if (!KNOWN.has(name)) return bad(`${name} is not a filter of the members table`);
    if (typeof raw !== 'string') return bad(`${name} must be given once`);
    if (raw.trim() !== '') values[name] = raw.trim();
  }
  const query: MemberQuery = { sort: '-created', limit: DEFAULT_PAGE_SIZE, cursor: null };
  if (values.status !== undefined) {
    const status = oneOf('status', values.status, MEMBER_STATUSES);
    if (!status.ok) return status;
    query.status = status.value;
  }
  if (values.plan !== undefined) {
    if (!UUID.test(values.plan)) return bad('plan must be a plan id (a UUID)');
    query.planId = values.plan.toLowerCase();
  }
  if (values.q !== undefined) {
    if (values.q.length > SEARCH_MAX) return bad(`q (the search) must be at most ${SEARCH_MAX} characters`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f]/.test(values.q)) return bad('q (the search) must not contain control characters');
    query.search = values.q.toLowerCase();
  }
  if (values.view !== undefined) {
    const view = oneOf('view', values.view, SAVED_VIEWS);
    if (!view.ok) return view;
    query.view = view.value;
    query.sort = VIEW_SORT[view.value];
  }
  if (values.sort !== undefined) {
    const sort = oneOf('sort', values.sort, MEMBER_SORTS);
    if (!sort.ok) return sort;
    query.sort = sort.value;
  }
  if (values.limit !== undefined) {
    const limit = oneOf('limit', values.limit, PAGE_SIZES.map(String));
    if (!limit.ok) return limit;
    query.limit = Number(limit.value);
  }
  if (values.after !== undefined && values.before !== undefined) return bad('after and before cannot both be given');
  const cursorText = values.after ?? values.before;
  if (cursorText !== undefined) {
    const cursor = decodeCursor(values.after !== undefined ? 'after' : 'before', cursorText, query.sort);
    if (!cursor) return bad(`${values.after !== undefined ? 'after' : 'before'} is not a page of this table: start from the first page`);
    query.cursor = cursor;
  }
  return ok(query);
}

/**
 * A page's edge as the next or previous link carries it: base64url of `[sort, key, id]`. The sort
 * is kept so that a link made for one order is refused under another (its key would mean nothing).
 */
export function encodeCursor(sort: MemberSort, key: string, id: string): string {
  return Buffer.from(JSON.stringify([sort, key, id]), 'utf8').toString('base64url');
}

/** An instant as PostgreSQL prints a timestamptz (`2026-11-28 10:00:00.123456+00`). */
const PG_INSTANT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

function decodeCursor(direction: PageCursor['direction'], text: string, sort: MemberSort): PageCursor | null {
  if (!/^[A-Za-z0-9_-]{1,800}$/.test(text)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== sort) return null;
  const [, key, id] = parsed as unknown[];
  if (typeof key !== 'string' || typeof id !== 'string') return null;
  const byName = sort === 'name' || sort === '-name';
  if (byName ? key.length > 300 || !/^\d{1,30}$/.test(id) : !PG_INSTANT.test(key) || !UUID.test(id)) return null;
  return { direction, key, id };
}

/** The query's filter and sort as form fields, for links (sort headers, paging, export): only what is set. */
export function fieldsOf(query: MemberFilter & { sort?: MemberSort; limit?: number }): Record<string, string> {
  const fields: Record<string, string> = {};
  if (query.status) fields.status = query.status;
  if (query.planId) fields.plan = query.planId;
  if (query.search) fields.q = query.search;
  if (query.view) fields.view = query.view;
  if (query.sort) fields.sort = query.sort;
  if (query.limit !== undefined && query.limit !== DEFAULT_PAGE_SIZE) fields.limit = String(query.limit);
  return fields;
}
