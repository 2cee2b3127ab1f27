import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { documentedOperations, generatedDocument, loadOperations, SchemaValidator, type OpenApiDocument } from './openapi-support.js';

/**
 * /docs' "Try it out" succeeds: the request body it fills in for an operation, built from the
 * document as Swagger UI builds it (the body's `example`, else the schema's first `examples` entry,
 * else one made from its type:
 * "string", 0, true, the first branch of a union, every property of an object), validates against
 * the operation's own schema, and sent to the real app it gets the operation's success. The reader
 * puts in what only they have (the ids in the path, a plan of theirs, a bot token, a Stripe key):
 * those come from the Operation descriptions the route suites use, as does the path.
 */

const doc = (await generatedDocument()) as unknown as OpenApiDocument;
const validator = new SchemaValidator(doc);
const { byName } = await loadOperations();
const withBody = [...documentedOperations(doc).entries()].filter(([, op]) => op.requestBody?.content['application/json']);

type Schema = Record<string, unknown>;

const resolve = (schema: Schema): Schema => {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((at, part) => (at as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  return resolve(target as Schema);
};

/** The value Swagger UI's sampler shows for `schema`. */
function sample(raw: Schema): unknown {
  const schema = resolve(raw);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches) return sample(branches[0]!);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => sample(s)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([k, v]) => [k, sample(v)]));
    case 'array':
      return [sample((schema.items ?? {}) as Schema)];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return schema.format === 'uuid' ? '3fa85f64-5717-4562-b3fc-2c963f66afa6' : typeof schema.default === 'string' ? schema.default : 'string';
    default:
      return 'string';
  }
}

/**
 * Fields whose value is the reader's own and cannot be in a document (a plan or target of their
 * project, a bot token, a Stripe key, a platform's id for their server): taken from the
 * Operation's prepared request, as the reader types them over the example.
 */
const READERS_OWN = new Set([
  'plan_id',
  'parent_target_id',
  'target_ids',
  'bot_token',
  'client_secret',
  'secret_key',
  'webhook_secret',
  'external_id',
  'user_id',
  'target_id',
  'plan_ids',
  'code',
  'label',
]);

/**
 * The example as the reader sends it: their own values typed over the example's (those the
 * prepared request has); an optional field of theirs that the prepared request leaves out is
 * cleared, as a reader without one would.
 */
function typedOver(example: Record<string, unknown>, prepared: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = { ...example };
  for (const k of Object.keys(out)) if (READERS_OWN.has(k) && !(prepared && k in prepared)) delete out[k];
  for (const [k, v] of Object.entries(prepared ?? {})) if (READERS_OWN.has(k)) out[k] = v;
  return out;
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

describe("the OpenAPI document's request examples", () => {
  it('cover the operations with a body', () => {
    expect(withBody.length).toBeGreaterThan(15);
  });

  for (const [name, op] of withBody) {
    it(`${name}: the body "Try it out" fills in is valid and succeeds`, async () => {
      // A body's own example sits beside its schema (@fastify/swagger moves a body schema's
      // `examples` there), and Swagger UI fills that in first.
      const media = op.requestBody!.content['application/json']! as { schema: Schema; example?: unknown };
      const body = 'example' in media ? media.example : sample(media.schema);
      expect(validator.request(op.path, op.method, body), `${name}: ${JSON.stringify(body)}`).toBeNull();
      const operation = byName.get(name);
      expect(operation, `${name} has no Operation description`).toBeDefined();
      const t = await h.tenant();
      const prepared = await operation!.prepare(h, t);
      const sent = Array.isArray(body)
        ? body.map((item, i) => typedOver(item as Record<string, unknown>, (prepared.payload as unknown[])[i] as Record<string, unknown> | undefined))
        : typedOver(body as Record<string, unknown>, prepared.payload as Record<string, unknown> | undefined);
      const res = await t.request({ method: operation!.method, url: prepared.url, payload: sent });
      expect(res.statusCode, `${name} with ${JSON.stringify(sent)}: ${res.body}`).toBe(operation!.successStatus);
    });
  }
});
