import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';
import { createLogger } from '../../src/logger.js';
import type { Operation } from '../support/operations.js';
import { borrowPglite } from '../support/pglite-pool.js';

/**
 * What the OpenAPI suites share: the Operation descriptions every route's suites already use
 * (found by file name, so a new `*operations*.ts` or `*.operation.ts` under test/ is picked up
 * without an edit here),
 * and response validation against the document with ajv's JSON Schema 2020-12 dialect (OpenAPI
 * 3.1's schema dialect).
 */

const TEST_ROOT = fileURLToPath(new URL('../', import.meta.url));
/**
 * Files holding Operation descriptions, anywhere under test/: operations.ts, operations.keys.ts,
 * webhook-operations.ts, live/live-token.operation.ts, openapi/service-operations.ts, …
 */
const OPERATION_FILE = /(^|[-.])operations?(\.[\w-]+)?\.ts$/;

export interface OpenApiDocument {
  paths: Record<string, Record<string, DocOperation>>;
  components: Record<string, Record<string, unknown>>;
  security?: unknown[];
  [key: string]: unknown;
}

export interface DocOperation {
  operationId: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/** Every documented operation as `METHOD /path` (the form Operation names use), with its object. */
export function documentedOperations(doc: OpenApiDocument): Map<string, DocOperation & { path: string; method: string }> {
  const out = new Map<string, DocOperation & { path: string; method: string }>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.has(method)) out.set(`${method.toUpperCase()} ${path}`, { ...op, path, method: method.toUpperCase() });
    }
  }
  return out;
}

const isOperation = (v: unknown): v is Operation =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Operation).name === 'string' &&
  /^[A-Z]+ \//.test((v as Operation).name) &&
  typeof (v as Operation).prepare === 'function' &&
  typeof (v as Operation).successStatus === 'number';

/** Every Operation exported (alone or in an array) by the operation description files, by name. */
export async function loadOperations(): Promise<{ byName: Map<string, Operation>; files: string[] }> {
  const files = (await readdir(TEST_ROOT, { recursive: true }))
    .filter((f) => OPERATION_FILE.test(basename(f)) && !f.endsWith('.test.ts') && !f.includes('node_modules'))
    .sort();
  const byName = new Map<string, Operation>();
  for (const file of files) {
    const mod = (await import(pathToFileURL(TEST_ROOT + file).href)) as Record<string, unknown>;
    for (const value of Object.values(mod).flatMap((v) => (Array.isArray(v) ? v : [v]))) {
      if (isOperation(value) && !byName.has(value.name)) byName.set(value.name, value);
    }
  }
  return { byName, files };
}

/** Validates bodies against the document's schemas, `$ref`s resolved within the document. */
export class SchemaValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(doc: OpenApiDocument) {
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi.json');
  }

  /** The ajv errors of a response `body` against its documented schema, or null when it conforms. */
  response(path: string, method: string, status: number, body: unknown): string | null {
    return this.check(['paths', path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema'], body);
  }

  /** The same for a request body against the documented requestBody. */
  request(path: string, method: string, body: unknown): string | null {
    return this.check(['paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'], body);
  }

  private check(at: string[], value: unknown): string | null {
    const pointer = at.map((p) => encodeURIComponent(p.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');
    let validate = this.cache.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json#/${pointer}` });
      this.cache.set(pointer, validate);
    }
    return validate(value) ? null : this.ajv.errorsText(validate.errors, { separator: '\n' });
  }
}

/**
 * The OpenAPI document as the client generator builds it (scripts/openapi-document.ts), on a
 * pooled in-memory PGlite instead of a new one; test/openapi/document.test.ts checks once that the
 * generator's own path gives the document the server serves.
 */
export async function generatedDocument(): Promise<Record<string, unknown>> {
  const database = await borrowPglite(createLogger('silent'));
  try {
    return await buildOpenApiDocument(database);
  } finally {
    await database.close();
  }
}
