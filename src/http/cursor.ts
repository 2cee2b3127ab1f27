import { createHash } from 'node:crypto';
import Type from 'typebox';
import { AppError } from '../domain/errors.js';
import { UUID_PATTERN } from '../domain/ids.js';
import { KEY_AT_PATTERN, type ListKey } from '../store/keyset.js';

/**
 * Cursor pages (docs/idempotency-and-lists.md, "Cursor pages"): `?cursor=` (empty for the first
 * page), then each answer's `next_cursor`. A cursor is opaque to clients: base64url of the page's
 * last key (the sort column to the microsecond, the id) and a digest of what it belongs to (the
 * list, the project, its filters and sort), so a cursor of another list, project, filter or
 * sort is refused instead of silently starting somewhere else. Nothing in it is secret: one made
 * by hand only positions a page of what the key may read anyway.
 */

/** The `cursor` query parameter of a list that pages by cursor. */
export const CursorParam = Type.Optional(
  Type.String({
    maxLength: 200,
    'x-message': 'cursor must be the next_cursor of the previous page (at most 200 characters)',
    description: "Page by cursor: empty for the first page, then the previous answer's next_cursor. The answer then has next_cursor (null on the last page) and no total",
  }),
);

/** Parameters that move within a list rather than choose it. */
const PAGING = new Set(['limit', 'offset', 'cursor']);

/** What a cursor belongs to: `list` of `projectId` with these filters and sort, as a short digest. */
function scopeOf(list: string, projectId: string, query: Record<string, unknown>): string {
  const chosen = Object.entries(query)
    .filter(([name, value]) => !PAGING.has(name) && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify([list, projectId, chosen])).digest('base64url').slice(0, 16);
}

const uuid = new RegExp(UUID_PATTERN);

interface Encoded {
  s: string;
  a: string;
  i: string;
}

export interface CursorScope {
  list: string;
  projectId: string;
  /** The route's whole query (paging parameters are left out). */
  query: Record<string, unknown>;
}

/** The cursor of the page after `key`; null when there is none. */
export function encodeCursor(scope: CursorScope, key: ListKey | null): string | null {
  if (key === null) return null;
  const encoded: Encoded = { s: scopeOf(scope.list, scope.projectId, scope.query), a: key.at, i: key.id };
  return Buffer.from(JSON.stringify(encoded)).toString('base64url');
}

/** Where a page starts: null for `cursor=` (the first page), else the key in the cursor; a 422 naming `cursor` if it is not one of this list's. */
export function decodeCursor(scope: CursorScope, cursor: string): ListKey | null {
  if (cursor === '') return null;
  let decoded: Partial<Encoded> | null = null;
  try {
    decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Encoded>) : null;
  } catch {
    decoded = null;
  }
  const { s, a, i } = decoded !== null && typeof decoded === 'object' ? decoded : {};
  if (typeof s !== 'string' || typeof a !== 'string' || typeof i !== 'string' || !KEY_AT_PATTERN.test(a) || !uuid.test(i)) {
    throw new AppError('VALIDATION_ERROR', 'cursor is malformed: send the next_cursor of the previous page as it came');
  }
  if (s !== scopeOf(scope.list, scope.projectId, scope.query)) {
    throw new AppError('VALIDATION_ERROR', 'cursor belongs to another list, project, filter or sort: page with the filters and sort it came with');
  }
  return { at: a, id: i };
}
