import { randomUUID } from 'node:crypto';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase } from '../../src/database/db.js';
import { expectError, forEachCase, projectState, UUID } from './api.js';
import type { Harness, Tenant } from './harness.js';
import { pathOf, type Operation } from './operations.js';
import { unknownKey } from './security.js';

/**
 * The error cases every route shares, below its own rules: the HTTP transport (JSON parsing,
 * media type, body size, method, route), the request id, and an unreachable database. Run for
 * every route by test/http/shared.transport.test.ts. Variants of one behaviour (the kinds of
 * malformed JSON, say) share one tenant, and each is still asserted on its own.
 */

/** `payload` with an ignored `padding` field: on the object, or on the first item of an array body. */
function withPadding(payload: unknown, padding: string): unknown {
  if (Array.isArray(payload)) return [{ ...(payload[0] as object), padding }, ...payload.slice(1)];
  return { ...(payload as object), padding };
}

/** An app whose database refuses every connection (nothing listens on port 1). */
export async function unreachableApp(): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const database = await openDatabase({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
  const app = await buildApp(await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database }));
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

const JSON_TYPE = { 'content-type': 'application/json' };

const MALFORMED_JSON: [string, string][] = [
  ['a truncated document', '{"extend": '],
  ['a trailing comma', '{"extend": 1,}'],
  ['single quotes', "{'extend': 1}"],
  ['a bare word', 'tomorrow'],
  ['a __proto__ key (prototype pollution)', '{"__proto__": {"admin": true}}'],
];

/** Bodies of another media type, and one without any. */
const UNSUPPORTED_MEDIA: [string, { payload: string; headers: Record<string, string>; message?: string }][] = [
  ['text/plain', { payload: 'extend=1', headers: { 'content-type': 'text/plain' }, message: 'Unsupported Content-Type; send application/json' }],
  ['form data', { payload: 'extend=1', headers: { 'content-type': 'application/x-www-form-urlencoded' }, message: 'Unsupported Content-Type; send application/json' }],
  ['XML', { payload: 'extend=1', headers: { 'content-type': 'application/xml' }, message: 'Unsupported Content-Type; send application/json' }],
  ['a body without a Content-Type', { payload: '{"x":1}', headers: {} }],
];

/**
 * `op`'s transport cases on the harness `harness()` returns, and an app on an unreachable database
 * from `unreachable()` (the caller creates and closes both).
 */
export function transportCases(op: Operation, harness: () => Harness, unreachable: () => FastifyInstance): void {
  /** `op`'s prepared request for a fresh tenant, sent raw; proves nothing changed in the project. */
  async function refusedTenant() {
    const h = harness();
    const t = await h.tenant();
    const prepared = await op.prepare(h, t);
    const path = pathOf(prepared.url);
    const send = (options: { method?: HTTPMethods; payload?: string; headers?: Record<string, string> }) =>
      t.request({
        method: options.method ?? op.method,
        url: prepared.url,
        ...(options.payload === undefined ? {} : { payload: options.payload }),
        headers: options.headers ?? {},
      });
    const unchanged = async (refuse: () => Promise<void>) => {
      const before = await projectState(h, t.projectId);
      await refuse();
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    };
    return { t, prepared, path, send, unchanged };
  }

  /** A fresh request of `op` that succeeds, sent with `requestId` (none when undefined). */
  async function control(t: Tenant, requestId?: string) {
    const { url, payload } = await op.prepare(harness(), t);
    const res = await t.request({
      method: op.method,
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: requestId === undefined ? {} : { 'x-request-id': requestId },
    });
    expect(res.statusCode, res.body).toBe(op.successStatus);
    return res;
  }

  it(`answers 405 METHOD_NOT_ALLOWED to ${op.wrongMethod}, with Allow: ${op.allow}, carrying an adopted request id`, async () => {
    const { send, path, unchanged } = await refusedTenant();
    const id = randomUUID();
    await unchanged(async () => {
      const res = await send({ method: op.wrongMethod, headers: { 'x-request-id': id } });
      expectError(res, { status: 405, code: 'METHOD_NOT_ALLOWED', method: op.wrongMethod, path, message: `Method ${op.wrongMethod} is not allowed on ${path}` });
      expect(res.headers['allow'], res.body).toBe(op.allow);
      expect(res.headers['x-request-id'], res.body).toBe(id);
      expect(res.json().request_id, res.body).toBe(id);
    });
  });

  it('answers 404 NOT_FOUND in the envelope for the same path under another version, without the query string', async () => {
    const h = harness();
    const t = await h.tenant();
    const { url } = await op.prepare(h, t);
    const v3 = url.replace('/v2/', '/v3/');
    const res = await t.request({ method: op.method, url: `${v3}${v3.includes('?') ? '&' : '?'}probe=1` });
    const path = pathOf(v3);
    expectError(res, { status: 404, code: 'NOT_FOUND', method: op.method, path, message: `Route ${op.method} ${path} not found` });
    expect(res.headers['allow'], res.body).toBeUndefined();
  });

  it('adopts a UUID X-Request-Id the client sends (an upper-case one in its lower-case form), in the header and the body', async () => {
    const t = await harness().tenant();
    const [lower, upper] = [randomUUID(), randomUUID()];
    await forEachCase(
      [
        ['a UUID', { sent: lower, id: lower }],
        ['an upper-case UUID', { sent: upper.toUpperCase(), id: upper }],
      ],
      async ({ sent, id }) => {
        const res = await control(t, sent);
        expect(res.headers['x-request-id'], res.body).toBe(id);
        if (op.successStatus !== 204 && !op.file) expect(res.json().request_id, res.body).toBe(id);
      },
    );
  });

  it('replaces any other X-Request-Id with a fresh UUID, and gives every request its own', async () => {
    const t = await harness().tenant();
    const ids: string[] = [];
    const cases: [string, string | undefined][] = [
      ['a non-UUID', 'my-request-1'],
      ['a UUID with trailing text', `${randomUUID()}x`],
      ['an empty value', ''],
      ['no header', undefined],
      ['no header again', undefined],
    ];
    await forEachCase(cases, async (sent) => {
      const res = await control(t, sent);
      const id = res.headers['x-request-id'] as string;
      expect(id, res.body).toMatch(UUID);
      expect(id).not.toBe(sent);
      if (op.successStatus !== 204 && !op.file) expect(res.json().request_id, res.body).toBe(id);
      ids.push(id);
    });
    expect(new Set(ids).size, ids.join(', ')).toBe(ids.length);
  });

  if (op.invalidPayload !== undefined) {
    it('answers 400 BAD_REQUEST to malformed JSON, a __proto__ key included; nothing changes', async () => {
      const { send, path, unchanged } = await refusedTenant();
      await unchanged(() =>
        forEachCase(MALFORMED_JSON, async (payload) => {
          const res = await send({ payload, headers: JSON_TYPE });
          expectError(res, { status: 400, code: 'BAD_REQUEST', method: op.method, path, message: 'Malformed JSON in request body' });
        }),
      );
    });

    it('answers 422 VALIDATION_ERROR to a NUL or an unpaired surrogate in any string of the body, naming the field; nothing changes', async () => {
      const { send, path, prepared, unchanged } = await refusedTenant();
      const ignored = Array.isArray(prepared.payload) ? ['0', 'ignored'] : ['ignored'];
      const cases = [...stringLeaves(prepared.payload), ignored].flatMap((at) =>
        ['a\u0000b', 'a\uD83Db', '\uDE00'].map((text) => {
          const field = at.join('.');
          return [`${JSON.stringify(text)} in ${field}`, { payload: withText(prepared.payload, at, text), field }] as const;
        }),
      );
      await unchanged(() =>
        forEachCase(cases, async ({ payload, field }) => {
          const res = await send({ payload: JSON.stringify(payload), headers: JSON_TYPE });
          expect(res.statusCode, res.body).toBe(422);
          // An instant field keeps the two-entry shape about instants; any other field is named with the text's fault.
          const body = res.json() as { path: string; error?: { error_code: string; message: string }; errors?: { error_code: string; message: string }[] };
          const [first] = body.errors ?? [body.error!];
          expect(body.path).toBe(path);
          expect(first!.error_code).toBe('VALIDATION_ERROR');
          expect(first!.message).toMatch(new RegExp(`^${field.replaceAll('.', '\\.')} (must not contain NUL characters or unpaired surrogates$|as a number )`));
        }),
      );
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE to another media type or none; nothing changes', async () => {
      const { send, path, unchanged } = await refusedTenant();
      await unchanged(() =>
        forEachCase(UNSUPPORTED_MEDIA, async ({ payload, headers, message }) => {
          const res = await send({ payload, headers });
          expectError(res, { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', method: op.method, path, ...(message ? { message } : {}) });
        }),
      );
    });

    it('answers 413 PAYLOAD_TOO_LARGE to a body over 1 MiB; nothing changes', async () => {
      const { send, path, prepared, unchanged } = await refusedTenant();
      // A valid request, padded past the limit by an ignored field.
      const body = JSON.stringify(withPadding(prepared.payload, 'x'.repeat(1024 * 1024)));
      expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024);
      await unchanged(async () => {
        const res = await send({ payload: body, headers: JSON_TYPE });
        expectError(res, { status: 413, code: 'PAYLOAD_TOO_LARGE', method: op.method, path, message: 'Request body is larger than 1 MiB' });
      });
    });

    it('accepts a body of exactly 1 MiB (the limit is not lower than stated)', async () => {
      const h = harness();
      const t = await h.tenant();
      const prepared = await op.prepare(h, t);
      const head = JSON.stringify(withPadding(prepared.payload, ''));
      const body = head.replace('"padding":""', `"padding":"${'x'.repeat(1024 * 1024 - head.length)}"`);
      expect(Buffer.byteLength(body)).toBe(1024 * 1024);
      const res = await t.request({ method: op.method, url: prepared.url, payload: body, headers: JSON_TYPE });
      expect(res.statusCode, res.body).toBe(op.successStatus);
    });
  }

  it('answers 503 SERVICE_UNAVAILABLE in the envelope when the database is unreachable, leaking nothing', async () => {
    const h = harness();
    const t = await h.tenant();
    const { url, payload } = await op.prepare(h, t);
    const res = await unreachable().inject({
      method: op.method,
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: { authorization: `Bearer ${unknownKey()}` },
    });
    expectError(res, { status: 503, code: 'SERVICE_UNAVAILABLE', method: op.method, path: pathOf(url), message: 'The database is unavailable; retry later' });
    // Everything but the echoes of this request (its path and request id: random ids, which
    // contain "5432" in about one run in twenty).
    const { path: _path, request_id: _requestId, ...answer } = res.json() as Record<string, unknown>;
    expect(JSON.stringify(answer)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|5432|:1\b|postgres/i);
  });
}

/** The paths of every string in a JSON value (array indexes as strings). */
function stringLeaves(value: unknown, at: string[] = []): string[][] {
  if (typeof value === 'string') return [at];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => stringLeaves(child, [...at, key]));
}

/** A copy of `value` with `text` at `at` (a new field where there was none). */
function withText(value: unknown, at: readonly string[], text: string): unknown {
  const copy = structuredClone(value ?? {}) as Record<string, unknown>;
  let node = copy;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[at[at.length - 1]!] = text;
  return copy;
}
