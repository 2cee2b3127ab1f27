import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';

/**
 * Request validation. Bodies are checked as sent: no type coercion ("30", true and [30] are not
 * numbers) and no stripping of unknown keys (they are ignored). Path and query parameters arrive
 * as strings, so only they are coerced. `allErrors` stays off: collecting every error is a DoS
 * vector on large bodies.
 */

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    verbose: true,
    strict: true,
    // NaN and Infinity are no numbers (in a body; a coerced query value is checked after, below).
    strictNumbers: true,
  });
  // `x-message`: a schema's own wording for its validation error (see validationMessage).
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

/**
 * A NUL character or half of a surrogate pair: text no field of tenure's holds. PostgreSQL refuses
 * NUL in text (`invalid byte sequence … 0x00`), and a lone surrogate is not Unicode: it cannot be
 * encoded as UTF-8, so it could not be stored or sent back as it came. In unicode mode (`u`) the
 * class matches only surrogates that are not part of a pair.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for.
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** Where the first string holding unstorable text is in `data` (a JSON pointer), or null. */
export function unstorableTextAt(data: unknown, path = ''): string | null {
  if (typeof data === 'string') return UNSTORABLE.test(data) ? path : null;
  if (data === null || typeof data !== 'object') return null;
  for (const [key, value] of Object.entries(data)) {
    if (UNSTORABLE.test(key)) return `${path}/${key.replace(UNSTORABLE, '?')}`;
    const at = unstorableTextAt(value, `${path}/${key}`);
    if (at !== null) return at;
  }
  return null;
}

/**
 * Where the first number that is not finite is in `data`, or null. ajv coerces a query value
 * such as `1e400` to Infinity and, having coerced it, checks neither its type again nor its bounds
 * (they skip what is not finite): `?offset=1e400` reached SQL as a 500. Checked after ajv.
 */
export function nonFiniteAt(data: unknown, path = ''): string | null {
  if (typeof data === 'number') return Number.isFinite(data) ? null : path;
  if (data === null || typeof data !== 'object') return null;
  for (const [key, value] of Object.entries(data)) {
    const at = nonFiniteAt(value, `${path}/${key}`);
    if (at !== null) return at;
  }
  return null;
}

/** The error of a field holding unstorable text, as ajv reports its own (validationMessage words it). */
function unstorableError(instancePath: string): ErrorObject {
  return { keyword: 'unstorableText', instancePath, schemaPath: '#', params: {}, message: 'must not contain NUL characters or unpaired surrogates' };
}

function nonFiniteError(instancePath: string): ErrorObject {
  return { keyword: 'finite', instancePath, schemaPath: '#', params: {}, message: 'must be a finite number' };
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * A query string takes only the parameters its route names (docs/idempotency-and-lists.md,
 * "Query parameters"): an unknown one is a 422 naming it, never ignored (`?status=active` on a
 * list without that filter would look like a working filter). Bodies keep ignoring unknown keys.
 */
function strictQuery(schema: object, httpPart: string | undefined): object {
  if (httpPart !== 'querystring') return schema;
  const s = schema as { type?: unknown; additionalProperties?: unknown };
  return s.type === 'object' && s.additionalProperties === undefined ? { ...schema, additionalProperties: false } : schema;
}

/**
 * Every API route (under /v2/) validates its query string, so one without parameters refuses any
 * (strictQuery): a route with no querystring schema gets an empty one. The pages (Telegram's and
 * Discord's redirects carry their own fields) and the probes are left as they are.
 */
export function registerStrictQueries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v2/')) return;
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    if (schema.querystring === undefined) route.schema = { ...schema, querystring: { type: 'object', properties: {} } };
  });
}

/**
 * Every part of every request is checked for unstorable text first (a 422 naming the field), then
 * against its route's schema; a route needs nothing of its own for it.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? bodyAjv : paramAjv).compile(strictQuery(schema as object, httpPart)) as Validate;
  const checked: Validate = (data) => {
    const at = unstorableTextAt(data);
    if (at !== null) {
      checked.errors = [unstorableError(at)];
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors ?? null;
    if (!valid) return false;
    const infinite = nonFiniteAt(data);
    if (infinite !== null) {
      checked.errors = [nonFiniteError(infinite)];
      return false;
    }
    return true;
  };
  return checked as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** One human sentence for an ajv error: the schema's `x-message` when it has one. */
export function validationMessage(error: ErrorObject, part: string | undefined): string {
  const own = (error.parentSchema as { 'x-message'?: string } | undefined)?.['x-message'];
  if (own) return own;
  const field =
    error.keyword === 'required'
      ? (error.params as { missingProperty: string }).missingProperty
      : error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (error.keyword === 'required') return `${field} is required`;
  if (error.keyword === 'additionalProperties') {
    const name = (error.params as { additionalProperty: string }).additionalProperty;
    return part === 'querystring' ? `${name} is not a query parameter of this route` : `${field ? `${field}.` : ''}${name} is not allowed`;
  }
  return `${field || part || 'body'} ${error.message ?? 'is invalid'}`;
}

/** The top-level field an ajv error is about ('' for the whole document). */
export function fieldOf(error: ErrorObject): string {
  if (error.keyword === 'required') return (error.params as { missingProperty: string }).missingProperty;
  return error.instancePath.split('/')[1] ?? '';
}
