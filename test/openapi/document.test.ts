import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';
import { createHarness, type Harness } from '../support/harness.js';
import { documentedOperations, type DocOperation, type OpenApiDocument } from './openapi-support.js';

/**
 * GET /openapi.json: a valid OpenAPI 3.1 document, public, generated from the
 * route schemas, with the security scheme, the shared error shapes and the response headers.
 */

let h: Harness;
let doc: OpenApiDocument;
beforeAll(async () => {
  h = await createHarness();
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode, res.body).toBe(200);
  doc = res.json();
});
afterAll(() => h.close());

const ops = () => [...documentedOperations(doc).entries()];

describe('GET /openapi.json', () => {
  it('is served without a key, as JSON, limited by IP like every public route', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-ratelimit-limit'], 'the IP window').toBe(String(h.config.rateLimit.perIp));
    expect(res.json().openapi).toBe('3.1.0');
  });

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors, JSON.stringify(result.errors, null, 2)).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is the document the client generator builds without a server', async () => {
    expect(await buildOpenApiDocument()).toStrictEqual(doc);
  });

  it('declares the API key as a bearer scheme, required everywhere', () => {
    expect(doc.components.securitySchemes).toStrictEqual({
      apiKey: { type: 'http', scheme: 'bearer', description: expect.stringContaining('tk_live_') },
    });
    expect(doc.security).toStrictEqual([{ apiKey: [] }]);
    for (const [name, op] of ops()) {
      if (op.path.startsWith('/v2/projects/')) expect(op.security, name).toBeUndefined();
    }
  });

  it('leaves out the /docs internals and the document itself', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.startsWith('/docs') || p === '/openapi.json')).toStrictEqual([]);
    expect(paths.length).toBeGreaterThan(10);
  });

  it('gives every operation a unique, stable operationId, a tag and a summary', () => {
    const ids = ops().map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [name, op] of ops()) {
      expect(op.operationId, name).toMatch(/^(get|post|put|patch|delete)[A-Z][A-Za-z0-9]*$/);
      expect(op.tags, name).toHaveLength(1);
      expect(op.summary, name).toMatch(/\S/);
    }
    const byName = Object.fromEntries(ops().map(([name, op]) => [name, op.operationId]));
    expect(byName['PATCH /v2/projects/{project_id}/memberships/{user_id}/extend']).toBe('patchMembershipsByUserIdExtend');
    expect(byName['DELETE /v2/projects/{project_id}/integrations/webhooks/{webhook_id}']).toBe('deleteIntegrationsWebhooksByWebhookId');
    const tags = (doc.tags as { name: string }[]).map((t) => t.name);
    expect(tags).toEqual(expect.arrayContaining(['memberships', 'webhooks']));
  });

  it('documents request bodies and path parameters from the route schemas', () => {
    const extend = documentedOperations(doc).get('PATCH /v2/projects/{project_id}/memberships/{user_id}/extend')!;
    const body = extend.requestBody!.content['application/json']!.schema as { properties: { extend: { anyOf: unknown[] } }; required: string[] };
    expect(body.required).toStrictEqual(['extend']);
    expect(body.properties.extend.anyOf).toHaveLength(2);
    const params = (extend as unknown as { parameters: { name: string; in: string; required: boolean }[] }).parameters;
    expect(params.map((p) => [p.name, p.in, p.required])).toEqual(
      expect.arrayContaining([
        ['project_id', 'path', true],
        ['user_id', 'path', true],
      ]),
    );
  });

  it('documents the errors every route can give, with both 422 shapes and the 429 shape, named once', () => {
    const schemas = doc.components.schemas as Record<string, { properties: Record<string, { properties?: Record<string, unknown> }>; anyOf?: { required: string[] }[] }>;
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['Error', 'ValidationError', 'RateLimitError']));
    expect(Object.keys(schemas.Error!.properties).sort()).toStrictEqual(['code', 'error', 'method', 'ok', 'path', 'request_id']);
    expect(Object.keys(schemas.RateLimitError!.properties), 'the 429 body has no ok').not.toContain('ok');
    expect(Object.keys(schemas.RateLimitError!.properties.error!.properties!).sort()).toStrictEqual(['code', 'message', 'retry_after']);
    expect(schemas.ValidationError!.anyOf!.map((v) => v.required.includes('errors')).sort()).toStrictEqual([false, true]);

    const bodyOf = (op: DocOperation, status: string) => op.responses[status]?.content?.['application/json']?.schema;
    for (const [name, op] of ops()) {
      if (!op.path.startsWith('/v2/projects/')) continue;
      for (const status of ['400', '401', '403', '415', '500', '503']) {
        expect(bodyOf(op, status), `${name} ${status}`).toStrictEqual({ $ref: '#/components/schemas/Error' });
      }
      expect(bodyOf(op, '429'), name).toStrictEqual({ $ref: '#/components/schemas/RateLimitError' });
      if (op.responses['422']) expect(bodyOf(op, '422'), name).toStrictEqual({ $ref: '#/components/schemas/ValidationError' });
    }
  });

  it('documents X-Request-Id on every response, the rate-limit headers, Retry-After on 429', () => {
    const limitHeaders = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];
    expect(Object.keys(doc.components.headers!)).toEqual(expect.arrayContaining(['X-Request-Id', 'Retry-After', ...limitHeaders]));
    for (const [name, op] of ops()) {
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect(headers, `${name} ${status}`).toContain('X-Request-Id');
        if (op.security === undefined) expect(headers, `${name} ${status}`).toEqual(expect.arrayContaining(limitHeaders));
        if (status === '429') expect(headers, name).toContain('Retry-After');
      }
    }
  });

  it('gives 204 responses no body', () => {
    const noContent = ops().filter(([, op]) => op.responses['204']);
    expect(noContent.length).toBeGreaterThan(0);
    for (const [name, op] of noContent) expect(op.responses['204']!.content, name).toBeUndefined();
  });
});
