import { randomUUID } from 'node:crypto';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, type Database } from '../../src/store/db.js';
import { expectError, projectState, UUID } from './api.js';
import { createHarness, type Harness, type Tenant } from './harness.js';
import { pathOf, type Operation } from './operations.js';
import { unknownKey } from './security.js';

/** `payload` with an ignored `padding` field: on the object, or on the first item of an array body. */
function withPadding(payload: unknown, padding: string): unknown {
  if (Array.isArray(payload)) return [{ ...(payload[0] as object), padding }, ...payload.slice(1)];
  return { ...(payload as object), padding };
}

/**
 * Error cases every operation shares, below its own rules: the HTTP transport (JSON parsing,
 * media type, body size, method, route), the request id, and an unreachable database. Each
 * `<operation>.error.test.ts` runs these next to its operation-specific cases.
 */
export function describeTransportErrors(op: Operation): void {
  describe(`${op.name}: transport errors`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness();
    });
    afterAll(() => h.close());

    /** Sends a raw request on `op`'s path for a fresh tenant and checks that nothing changed. */
    async function send(options: { method?: HTTPMethods; payload?: string; headers?: Record<string, string> }) {
      const t = await h.tenant();
      const prepared = await op.prepare(h, t);
      const before = await projectState(h, t.projectId);
      const res = await t.request({
        method: options.method ?? op.method,
        url: prepared.url,
        ...(options.payload === undefined ? {} : { payload: options.payload }),
        headers: options.headers ?? {},
      });
      expect(await projectState(h, t.projectId), res.body).toStrictEqual(before);
      return { res, path: pathOf(prepared.url), t };
    }

    it(`answers 405 METHOD_NOT_ALLOWED to ${op.wrongMethod}, with Allow: ${op.allow}`, async () => {
      const { res, path } = await send({ method: op.wrongMethod });
      expectError(res, {
        status: 405,
        code: 'METHOD_NOT_ALLOWED',
        method: op.wrongMethod,
        path,
        message: `Method ${op.wrongMethod} is not allowed on ${path}`,
      });
      expect(res.headers['allow'], res.body).toBe(op.allow);
    });

    it('answers 404 NOT_FOUND in the envelope for the same path under another version, without the query string', async () => {
      const t = await h.tenant();
      const { url } = await op.prepare(h, t);
      const v3 = url.replace('/v2/', '/v3/');
      const res = await t.request({ method: op.method, url: `${v3}${v3.includes('?') ? '&' : '?'}probe=1` });
      const path = pathOf(v3);
      expectError(res, { status: 404, code: 'NOT_FOUND', method: op.method, path, message: `Route ${op.method} ${path} not found` });
      expect(res.headers['allow'], res.body).toBeUndefined();
    });

    describe('X-Request-Id', () => {
      async function control(t: Tenant, requestId?: string) {
        const { url, payload } = await op.prepare(h, t);
        return t.request({
          method: op.method,
          url,
          ...(payload === undefined ? {} : { payload: payload as object }),
          headers: requestId === undefined ? {} : { 'x-request-id': requestId },
        });
      }

      it('adopts a UUID the client sends, in the header and the body', async () => {
        const t = await h.tenant();
        const id = randomUUID();
        const res = await control(t, id);
        expect(res.statusCode, res.body).toBe(op.successStatus);
        expect(res.headers['x-request-id'], res.body).toBe(id);
        if (op.successStatus !== 204) expect(res.json().request_id, res.body).toBe(id);
      });

      it('adopts an upper-case UUID in its lower-case form', async () => {
        const t = await h.tenant();
        const id = randomUUID();
        const res = await control(t, id.toUpperCase());
        expect(res.statusCode, res.body).toBe(op.successStatus);
        expect(res.headers['x-request-id'], res.body).toBe(id);
      });

      it.each([
        ['a non-UUID', 'my-request-1'],
        ['a UUID with trailing text', `${randomUUID()}x`],
        ['an empty value', ''],
      ])('replaces %s with a fresh UUID', async (_what, sent) => {
        const t = await h.tenant();
        const res = await control(t, sent);
        expect(res.statusCode, res.body).toBe(op.successStatus);
        const id = res.headers['x-request-id'];
        expect(id).toMatch(UUID);
        expect(id).not.toBe(sent);
        if (op.successStatus !== 204) expect(res.json().request_id, res.body).toBe(id);
      });

      it('gives every request its own id', async () => {
        const t = await h.tenant();
        const [a, b] = [await control(t), await control(t)];
        expect(a.headers['x-request-id'], a.body).toMatch(UUID);
        expect(b.headers['x-request-id'], b.body).toMatch(UUID);
        expect(a.headers['x-request-id'], a.body).not.toBe(b.headers['x-request-id']);
      });

      it('carries an adopted id on error responses too', async () => {
        const id = randomUUID();
        const { res } = await send({ method: op.wrongMethod, headers: { 'x-request-id': id } });
        expect(res.statusCode, res.body).toBe(405);
        expect(res.headers['x-request-id'], res.body).toBe(id);
        expect(res.json().request_id, res.body).toBe(id);
      });
    });

    if (op.invalidPayload !== undefined) {
      describe('request body', () => {
        const json = { 'content-type': 'application/json' };

        it.each([
          ['a truncated document', '{"extend": '],
          ['a trailing comma', '{"extend": 1,}'],
          ['single quotes', "{'extend': 1}"],
          ['a bare word', 'tomorrow'],
        ])('answers 400 BAD_REQUEST to malformed JSON (%s)', async (_what, payload) => {
          const { res, path } = await send({ payload, headers: json });
          expectError(res, { status: 400, code: 'BAD_REQUEST', method: op.method, path, message: 'Malformed JSON in request body' });
        });

        it('answers 400 BAD_REQUEST to a __proto__ key (prototype pollution)', async () => {
          const { res, path } = await send({ payload: '{"__proto__": {"admin": true}}', headers: json });
          expectError(res, { status: 400, code: 'BAD_REQUEST', method: op.method, path, message: 'Malformed JSON in request body' });
        });

        it.each([
          ['text/plain', 'text/plain'],
          ['form data', 'application/x-www-form-urlencoded'],
          ['XML', 'application/xml'],
        ])('answers 415 UNSUPPORTED_MEDIA_TYPE to %s', async (_what, contentType) => {
          const { res, path } = await send({ payload: 'extend=1', headers: { 'content-type': contentType } });
          expectError(res, {
            status: 415,
            code: 'UNSUPPORTED_MEDIA_TYPE',
            method: op.method,
            path,
            message: 'Unsupported Content-Type; send application/json',
          });
        });

        it('answers 415 UNSUPPORTED_MEDIA_TYPE to a body without a Content-Type', async () => {
          const { res, path } = await send({ payload: '{"x":1}' });
          expectError(res, { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', method: op.method, path });
        });

        it('answers 413 PAYLOAD_TOO_LARGE to a body over 1 MiB', async () => {
          const t = await h.tenant();
          const prepared = await op.prepare(h, t);
          const before = await projectState(h, t.projectId);
          // A valid request, padded past the limit by an ignored field.
          const body = JSON.stringify(withPadding(prepared.payload, 'x'.repeat(1024 * 1024)));
          expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024);
          const res = await t.request({ method: op.method, url: prepared.url, payload: body, headers: json });
          expectError(res, {
            status: 413,
            code: 'PAYLOAD_TOO_LARGE',
            method: op.method,
            path: pathOf(prepared.url),
            message: 'Request body is larger than 1 MiB',
          });
          expect(await projectState(h, t.projectId)).toStrictEqual(before);
        });

        it('accepts a body of exactly 1 MiB (the limit is not lower than stated)', async () => {
          const t = await h.tenant();
          const prepared = await op.prepare(h, t);
          const head = JSON.stringify(withPadding(prepared.payload, ''));
          const body = head.replace('"padding":""', `"padding":"${'x'.repeat(1024 * 1024 - head.length)}"`);
          expect(Buffer.byteLength(body)).toBe(1024 * 1024);
          const res = await t.request({ method: op.method, url: prepared.url, payload: body, headers: json });
          expect(res.statusCode, res.body).toBe(op.successStatus);
        });
      });
    }

    describe('an unreachable database', () => {
      let database: Database;
      let app: FastifyInstance;
      beforeAll(async () => {
        // Nothing listens on port 1: every connection is refused at once.
        database = await openDatabase({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
        app = await buildApp(await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database }));
        await app.ready();
      });
      afterAll(async () => {
        await app.close();
        await database.close();
      });

      it('answers 503 SERVICE_UNAVAILABLE in the envelope, leaking nothing', async () => {
        const t = await h.tenant();
        const { url, payload } = await op.prepare(h, t);
        const res = await app.inject({
          method: op.method,
          url,
          ...(payload === undefined ? {} : { payload: payload as object }),
          headers: { authorization: `Bearer ${unknownKey()}` },
        });
        expectError(res, {
          status: 503,
          code: 'SERVICE_UNAVAILABLE',
          method: op.method,
          path: pathOf(url),
          message: 'The database is unavailable; retry later',
        });
        expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|5432|:1\b|postgres/i);
      });
    });
  });
}
