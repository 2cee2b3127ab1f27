import { SerializerSelector, type Options, type SerializerCompiler, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's response serializers (fast-json-stringify, as by default), each distinct schema
 * compiled once. Every route declares the same error envelopes for seven or more statuses
 * (errorResponses() in schemas.ts), and Fastify compiles a serializer per route and status: about
 * ten times the distinct schemas, most of an app's build time. A schema is compiled on first
 * use and its serializer reused wherever the same schema object appears again.
 *
 * Without schemas added to the app (addSchema) or serializer options, a serializer depends on its
 * schema alone, so the cache is the process's: a second app in one process (tests build one per
 * file) compiles nothing again. Schemas are module constants and never mutated.
 */
const shared = new WeakMap<object, ReturnType<SerializerCompiler>>();
const defaults = SerializerSelector();

export const buildSerializer: SerializerFactory = (externalSchemas?: unknown, options?: Options) => {
  const compile = defaults(externalSchemas, options);
  const standalone = isEmpty(externalSchemas) && isEmpty(options);
  const cache = standalone ? shared : new WeakMap<object, ReturnType<SerializerCompiler>>();
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serializer = cache.get(schema);
    if (!serializer) {
      serializer = compile(route);
      cache.set(schema, serializer);
    }
    return serializer;
  };
};

const isEmpty = (value: unknown): boolean => value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0);
