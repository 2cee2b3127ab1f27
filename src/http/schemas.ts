import Type, { type TSchema } from 'typebox';
import { USER_ID_PATTERN, UUID_PATTERN } from '../domain/ids.js';
import { parseInstant } from '../domain/instant.js';

/** Shared pieces of the route schemas: identifiers, instants, the envelope and the error shapes. */

// The examples are what /docs' "Try it out" fills in (docs/openapi-and-client.md): valid values,
// and instants far enough ahead to stay in the future.
export const Uuid = (name: string) =>
  Type.String({ pattern: UUID_PATTERN, 'x-message': `${name} must be a UUID`, examples: ['3fa85f64-5717-4562-b3fc-2c963f66afa6'] });
export const UserId = Type.String({ pattern: USER_ID_PATTERN, 'x-message': 'user_id must be a string of digits', examples: ['123456789012345678'] });

/** The project in the path. Any value is accepted here: a key of another (or no) project gets 403. */
export const ProjectParams = Type.Object({ project_id: Type.String() });

/** Documentation of the two instant forms; the domain's parseInstant is the authority (calendar checks). */
export const Instant = Type.Union(
  [
    Type.Integer({ minimum: 1_000_000_000_000, maximum: 9_999_999_999_999, description: 'Unix time in milliseconds (13 digits)' }),
    Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$', description: 'YYYY-MM-DDTHH:MM:SS.mmmZ' }),
  ],
  {
    description: 'A future instant: 13-digit Unix milliseconds, or an ISO 8601 UTC string with exactly three millisecond digits',
    examples: ['2036-01-01T00:00:00.000Z'],
  },
);

/**
 * An instant in a query string: the same two forms as `Instant` (13-digit Unix milliseconds, or
 * `YYYY-MM-DDTHH:MM:SS.mmmZ`), as text; the route reads it with parseInstant (calendar checks).
 */
export const QueryInstant = (name: string) =>
  Type.String({
    pattern: '^(\\d{13}|\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z)$',
    'x-message': `${name} must be 13-digit Unix milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ`,
    examples: ['2026-01-12T10:32:27.560Z'],
  });

/** An instant of the query (QueryInstant's forms) as a Date; null when it names no real calendar instant. */
export const queryInstant = (value: string): Date | null => parseInstant(/^\d{13}$/.test(value) ? Number(value) : value);

/** The largest `offset` a list takes: past it no list has rows, and a larger number is not a database integer. */
export const MAX_OFFSET = 1_000_000_000;

/**
 * `limit` and `offset` of every list (docs/idempotency-and-lists.md, "Lists"): limit 1-100, default
 * 20 unless the route says otherwise; offset from 0. Spread into a querystring object.
 */
export function Page(defaultLimit = 20) {
  return {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit, 'x-message': 'limit must be an integer from 1 to 100' }),
    offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, 'x-message': `offset must be an integer from 0 to ${MAX_OFFSET}` }),
  };
}

export const InstantString = Type.String({ description: 'ISO 8601 UTC with milliseconds', examples: ['2026-01-12T10:32:27.560Z'] });

const head = {
  request_id: Type.String({ format: 'uuid' }),
  method: Type.String(),
  path: Type.String(),
  code: Type.Integer(),
};

/** A success envelope around `data`; `withTotal` adds the integer `total` (docs/api-contract.md, "The envelope"). */
export function Envelope<T extends TSchema>(data: T, withTotal = false) {
  return Type.Object({
    ok: Type.Literal(true),
    ...head,
    ...(withTotal ? { total: Type.Integer() } : {}),
    message: Type.String(),
    data,
  });
}

/**
 * A list that pages by offset or by cursor (docs/idempotency-and-lists.md, "Cursor pages"): `total`
 * on an offset page, as every list; `next_cursor` instead of it on a page asked for with `cursor`.
 */
export function CursorListEnvelope<T extends TSchema>(data: T) {
  return Type.Object({
    ok: Type.Literal(true),
    ...head,
    total: Type.Optional(Type.Integer({ description: 'Every match, on a page asked for by offset (no cursor); absent on a cursor page' })),
    next_cursor: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'On a cursor page: the cursor of the next page, null on the last; absent on an offset page' }),
    ),
    message: Type.String(),
    data,
  });
}

/** A list envelope that also reports the page: `total`, `limit` and `offset` (docs/api-keys-settings-users.md, "Users"). */
export function PagedEnvelope<T extends TSchema>(data: T) {
  return Type.Object({
    ok: Type.Literal(true),
    ...head,
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
    message: Type.String(),
    data,
  });
}

const ErrorEnvelope = Type.Object({
  ok: Type.Literal(false),
  ...head,
  error: Type.Object({ error_code: Type.String(), message: Type.String() }),
});

const ValidationListEnvelope = Type.Object({
  ok: Type.Literal(false),
  ...head,
  errors: Type.Array(Type.Object({ message: Type.String(), error_code: Type.String() })),
});

const RateLimitEnvelope = Type.Object({
  ...head,
  error: Type.Object({ message: Type.String(), code: Type.String(), retry_after: Type.Integer() }),
});

/** A 422: a list of field errors, or one error. One object, so every route shares its serializer. */
const UnprocessableEnvelope = Type.Union([ValidationListEnvelope, ErrorEnvelope]);

/** Error responses every API route can give, plus the route's own statuses. */
export function errorResponses(...statuses: (404 | 409 | 422)[]) {
  const own = Object.fromEntries(statuses.map((s) => [s, s === 422 ? UnprocessableEnvelope : ErrorEnvelope]));
  return {
    400: ErrorEnvelope,
    401: ErrorEnvelope,
    403: ErrorEnvelope,
    415: ErrorEnvelope,
    429: RateLimitEnvelope,
    500: ErrorEnvelope,
    503: ErrorEnvelope,
    ...own,
  };
}
