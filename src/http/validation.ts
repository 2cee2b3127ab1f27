import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

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
  });
  // `x-message`: a schema's own wording for its validation error (see validationMessage).
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;

/** One human sentence for an ajv error: the schema's `x-message` when it has one. */
export function validationMessage(error: ErrorObject, part: string | undefined): string {
  const own = (error.parentSchema as { 'x-message'?: string } | undefined)?.['x-message'];
  if (own) return own;
  const field =
    error.keyword === 'required'
      ? (error.params as { missingProperty: string }).missingProperty
      : error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (error.keyword === 'required') return `${field} is required`;
  return `${field || part || 'body'} ${error.message ?? 'is invalid'}`;
}

/** The top-level field an ajv error is about ('' for the whole document). */
export function fieldOf(error: ErrorObject): string {
  if (error.keyword === 'required') return (error.params as { missingProperty: string }).missingProperty;
  return error.instancePath.split('/')[1] ?? '';
}
