import { randomUUID } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appOn, createHarness, type Harness, type Tenant } from '../support/harness.js';
import type { Operation } from '../support/operations.js';
import { documentedOperations, generatedDocument, loadOperations, SchemaValidator, type OpenApiDocument } from './openapi-support.js';

/**
 * The document tells the truth: every documented operation is driven through the
 * real app, and every response it gives — success, 401, 422, 404, 400, 415, 429 — must have its
 * status documented for that operation and a body that validates against the documented schema
 * (ajv, JSON Schema 2020-12). The requests come from the Operation descriptions the route suites
 * already use; an operation without one fails the first test, by name.
 */

const doc = (await generatedDocument()) as unknown as OpenApiDocument;
const documented = documentedOperations(doc);
const { byName, files } = await loadOperations();
const covered = [...documented.keys()].filter((name) => byName.has(name)).sort();

let h: Harness;
/** The same database behind an app allowing one request per key and minute: the second is a 429. */
let strict: FastifyInstance;
let strictNode: Awaited<ReturnType<typeof appOn>>;
const validator = new SchemaValidator(doc);
/** What the operations answered for ids that are not there: 404s must be among them. */
const missingIdStatuses = new Set<number>();

beforeAll(async () => {
  h = await createHarness();
  strictNode = await appOn(h.database, { ...h.config, rateLimit: { ...h.config.rateLimit, perKey: 1 } });
  strict = strictNode.app;
});
afterAll(async () => {
  await strictNode?.close();
  await h?.close();
});

const UUID_SEGMENT = /\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$|\?)/gi;

/** Checks that `res` is documented for `name` and its body matches; returns the status. */
function expectConforms(name: string, res: LightMyRequestResponse): number {
  const op = documented.get(name)!;
  const status = res.statusCode;
  const response = op.responses[String(status)];
  expect(response, `${name}: status ${status} is not documented; body: ${res.body}`).toBeDefined();
  expect(res.headers['x-request-id'], `${name} ${status}`).toMatch(/^[0-9a-f-]{36}$/);
  if (op.security === undefined) expect(res.headers['x-ratelimit-limit'], `${name} ${status}: rate-limit headers`).toMatch(/^\d+$/);
  if (!response!.content) {
    expect(res.body, `${name} ${status} is documented without a body`).toBe('');
    return status;
  }
  const mediaType = String(res.headers['content-type']).split(';')[0]!;
  expect(Object.keys(response!.content), `${name} ${status}: media type`).toContain(mediaType);
  if (mediaType !== 'application/json') return status;
  const errors = validator.response(op.path, op.method, status, res.json());
  expect(errors, `${name} ${status} does not match its documented schema: ${res.body}`).toBeNull();
  return status;
}

async function prepared(op: Operation): Promise<{ t: Tenant; request: InjectOptions }> {
  const t = await h.tenant();
  const { url, payload } = await op.prepare(h, t);
  return { t, request: { method: op.method, url, ...(payload === undefined ? {} : { payload: payload as object }) } };
}

describe('OpenAPI conformance', () => {
  it('has an Operation description for every documented operation', () => {
    expect(files).toContain('support/operations.ts');
    const missing = [...documented.keys()].filter((name) => !byName.has(name)).sort();
    expect(missing, `documented operations without an Operation (test/**/*operations*.ts, *.operation.ts):\n${missing.join('\n')}`).toStrictEqual([]);
  });

  it('has no Operation description for an undocumented operation', () => {
    const unknown = [...byName.keys()].filter((name) => !documented.has(name)).sort();
    expect(unknown, `Operations whose route is not in the document:\n${unknown.join('\n')}`).toStrictEqual([]);
  });

  describe.each(covered)('%s', (name) => {
    const op = byName.get(name)!;
    const hasBody = ['POST', 'PUT', 'PATCH'].includes(op.method);

    it(`answers ${op.successStatus} with the documented body to a request the document allows`, async () => {
      const { t, request } = await prepared(op);
      const doc = documented.get(name)!;
      expect(Boolean(doc.requestBody), `${name}: a documented body iff the Operation sends one`).toBe(request.payload !== undefined);
      if (request.payload !== undefined) {
        expect(validator.request(doc.path, doc.method, request.payload), `${name}: request body`).toBeNull();
      }
      const res = await t.request(request);
      expect(res.statusCode, res.body).toBe(op.successStatus);
      expectConforms(name, res);
    });

    if (documented.get(name)!.security === undefined) {
      it('answers 401 without a key, as documented', async () => {
        const { request } = await prepared(op);
        const res = await h.app.inject(request);
        expect(res.statusCode, res.body).toBe(401);
        expectConforms(name, res);
        expect(res.headers['www-authenticate']).toBe('Bearer');
      });

      it('answers 429 once the key is over its limit, as documented, with Retry-After', async () => {
        const { t, request } = await prepared(op);
        const send = () => strict.inject({ ...request, headers: t.headers });
        expectConforms(name, await send());
        const res = await send();
        expect(res.statusCode, res.body).toBe(429);
        expectConforms(name, res);
        expect(res.headers['retry-after'], res.body).toBe(String(res.json().error.retry_after));
      });
    }

    if (op.invalidPayload !== undefined) {
      it('answers 422 for an invalid body, as documented', async () => {
        const { t, request } = await prepared(op);
        const res = await t.request({ ...request, payload: op.invalidPayload as object });
        expect(res.statusCode, res.body).toBe(422);
        expectConforms(name, res);
      });
    }

    if (hasBody) {
      it('answers 400 for malformed JSON and 415 for another media type, as documented', async () => {
        const { t, request } = await prepared(op);
        const broken = await t.request({ ...request, payload: '{"broken": ', headers: { 'content-type': 'application/json' } });
        expect(broken.statusCode, broken.body).toBe(400);
        expectConforms(name, broken);
        const text = await t.request({ ...request, payload: 'extend=soon', headers: { 'content-type': 'text/plain' } });
        expect(text.statusCode, text.body).toBe(415);
        expectConforms(name, text);
      });
    }

    if (/\{(?!project_id)\w+_id\}/.test(name)) {
      it('answers as documented for an id that is not there', async () => {
        const { t, request } = await prepared(op);
        const url = request.url as string;
        // The last UUID that is not the project's: the thing the operation acts on.
        const ids = [...url.matchAll(UUID_SEGMENT)].filter((m) => !m[0].includes(t.projectId));
        const target = ids.at(-1);
        const missingUrl = target
          ? url.slice(0, target.index) + `/${randomUUID()}` + url.slice(target.index + target[0].length)
          : url.replace(/\/\d+(?=\/|$|\?)/, '/1');
        const res = await t.request({ ...request, url: missingUrl });
        // Not always a 404 (banning a user tenure has not seen is allowed): documented is what counts.
        missingIdStatuses.add(expectConforms(name, res));
      });
    }
  });

  it('saw documented 404s for ids that are not there', () => {
    expect([...missingIdStatuses]).toContain(404);
  });
});
