import { createHash, type Hash } from 'node:crypto';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import Type, { type TSchema } from 'typebox';
import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import type { IdempotencyStore, StoredResponse } from '../store/idempotency.store.js';

/**
 * `Idempotency-Key` on every POST under /v2/projects/:project_id (the decisions are
 * written up in docs/idempotency-and-lists.md). Routes do not opt in: an onRoute hook gives each
 * such POST a header schema (so it is validated and documented in OpenAPI like any input) and
 * three hooks:
 *
 * - preParsing tees the body stream into a SHA-256 of method, URL and the raw body bytes;
 * - preHandler (after auth, project access and validation, so a refused request stores nothing)
 *   claims the key atomically, or answers from the record: replay, 409 while running, 422 for a
 *   different request;
 * - onSend stores what the handler produced (any status below 500), or releases the key on a 5xx
 *   so the client may retry.
 *
 * A route whose response must not be kept at all sets `config: { idempotency: false }`; one whose
 * response holds a secret shown once sets `config: { idempotency: { withhold: ['secret'] } }`: the
 * record keeps the response without those fields of its `data`, so no secret is ever stored in an
 * idempotency record, and a replay answers without them (docs/idempotency-and-lists.md).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: this POST ignores Idempotency-Key, because its response must not be stored;
     * `withhold`: fields of the response's `data` left out of the record (secrets shown once).
     */
    idempotency?: boolean | { withhold: readonly string[] };
  }
  interface FastifyRequest {
    idempotency: IdempotentRequest | null;
  }
}

interface IdempotentRequest {
  key: string;
  hash: Hash;
  requestHash?: string;
  claimed?: boolean;
  replay?: StoredResponse;
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** Stripe's retention: long enough for a client's retries across an outage, short enough to stay small. */
export const RETENTION_MS = 24 * 3_600_000;
/**
 * How long a claim whose request never finished (the node died) blocks its key with 409. Longer
 * than any request tenure serves, so a slow first request is never run twice.
 */
export const RUNNING_LEASE_MS = 5 * 60_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/** The response headers a replay repeats; the rate-limit headers are the replaying request's own. */
const KEPT_HEADERS = ['content-type', 'location', 'x-request-id'] as const;

/** 1-255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = '^[\\x20-\\x7E]{1,255}$';
const KEY_RULE = new RegExp(KEY_PATTERN);
const KEY_MESSAGE = 'Idempotency-Key must be 1 to 255 printable ASCII characters';

/**
 * Documents the header in each route's schema (and so in OpenAPI). tapBody checks the same rule
 * earlier, before the body is read, so the answer does not depend on whether the body is valid.
 */
const KeyHeader = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: KEY_PATTERN,
  description:
    'Makes the POST safe to retry: a repeat with the same key, method, path and body within 24 hours gets the first response again, with `Idempotent-Replayed: true`.',
  'x-message': KEY_MESSAGE,
});

/** The SHA-256 a request is recognised by: method, URL (path and query) and the raw body bytes. */
function requestHasher(method: string, url: string): Hash {
  return createHash('sha256').update(`${method} ${url}\n`);
}

export function registerIdempotency(app: FastifyInstance, deps: { store: IdempotencyStore; clock: Clock }): void {
  const { store, clock } = deps;
  app.decorateRequest('idempotency', null);

  let lastPrune = 0;
  let pruning: Promise<unknown> = Promise.resolve();
  /** Expired records are taken over by a claim anyway; this keeps the table from growing. */
  function pruneNow(request: FastifyRequest, now: number) {
    if (now - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = now;
    pruning = store.prune().catch((err: unknown) => request.log.warn({ err }, 'pruning idempotency keys failed'));
  }

  async function tapBody(request: FastifyRequest, _reply: FastifyReply, payload: Readable): Promise<Readable> {
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (request.method !== 'POST' || typeof key !== 'string') return payload;
    if (!KEY_RULE.test(key)) throw new AppError('VALIDATION_ERROR', KEY_MESSAGE);
    const hash = requestHasher(request.method, request.url);
    request.idempotency = { key, hash };
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    // A client abort destroys the tap with the error, which is where Fastify's parser listens.
    pipeline(payload, tap, () => undefined);
    return tap;
  }

  async function claim(request: FastifyRequest, reply: FastifyReply) {
    const state = request.idempotency;
    if (!state) return;
    const projectId = (request.params as { project_id: string }).project_id;
    const requestHash = state.hash.digest('hex');
    state.requestHash = requestHash;
    const now = clock.now().getTime();
    pruneNow(request, now);
    const claimed = await store.claim({
      projectId,
      key: state.key,
      requestHash,
      now: new Date(now),
      leaseUntil: new Date(now + RUNNING_LEASE_MS),
    });
    if (claimed.claimed) {
      state.claimed = true;
      return;
    }
    const record = claimed.record;
    if (record.requestHash !== requestHash) {
      throw new AppError(
        'VALIDATION_ERROR',
        'This Idempotency-Key was already used with a different request (method, path or body) in the last 24 hours; use a new key for a new request',
      );
    }
    if (record.state === 'running') {
      // Retry-After: the first request is usually done within the second.
      throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still in progress; retry once it has finished', undefined, 1);
    }
    state.replay = record.response;
    request.log.info({ replayed_request_id: record.response.headers['x-request-id'] }, 'idempotent replay');
    for (const [name, value] of Object.entries(record.response.headers)) reply.header(name, value);
    reply.header(REPLAYED_HEADER, 'true').code(record.response.status);
    return reply.send(record.response.body === '' ? undefined : record.response.body);
  }

  async function keep(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const state = request.idempotency;
    if (!state) return payload;
    if (state.replay) {
      // The body carries the first request's id; the header says the same (docs: "Request ids").
      const original = state.replay.headers['x-request-id'];
      if (original) reply.header('x-request-id', original);
      return payload;
    }
    if (!state.claimed) return payload;
    state.claimed = false;
    const target = { projectId: (request.params as { project_id: string }).project_id, key: state.key, requestHash: state.requestHash! };
    const storable = payload === null || payload === undefined || typeof payload === 'string';
    try {
      if (reply.statusCode >= 500 || !storable) {
        await store.release(target);
      } else {
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const value = reply.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        const withhold = (request.routeOptions.config as { idempotency?: unknown }).idempotency;
        const body = withheld((payload as string | null | undefined) ?? '', typeof withhold === 'object' && withhold !== null ? (withhold as { withhold: readonly string[] }).withhold : []);
        const response = { status: reply.statusCode, headers, body };
        const createdAt = clock.now().getTime();
        await store.complete({ ...target, response, expiresAt: new Date(createdAt + RETENTION_MS) });
      }
    } catch (err) {
      // The response is already decided and must still go out; the claim frees itself when its
      // lease ends. The error is logged without the query, whose parameters hold the body.
      request.log.error({ code: (err as { cause?: { code?: string } }).cause?.code }, 'recording the idempotent response failed');
    }
    return payload;
  }

  app.addHook('onRoute', (route) => {
    if (!appliesTo(route)) return;
    const schema = (route.schema ?? {}) as { headers?: TSchema & { properties?: Record<string, TSchema> } };
    const headers = schema.headers ?? Type.Object({});
    route.schema = { ...schema, headers: { ...headers, properties: { ...headers.properties, [IDEMPOTENCY_HEADER]: KeyHeader } } };
    route.preParsing = [...hooks(route.preParsing), tapBody];
    route.preHandler = [...hooks(route.preHandler), claim];
    route.onSend = [...hooks(route.onSend), keep];
  });

  app.addHook('onClose', async () => {
    await pruning;
  });
}

/** `body` (a JSON envelope) without `fields` of its `data`; as it is when there are none to leave out. */
export function withheld(body: string, fields: readonly string[]): string {
  if (fields.length === 0 || body === '') return body;
  const envelope = JSON.parse(body) as { data?: unknown };
  const data = envelope.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return body;
  const kept = Object.fromEntries(Object.entries(data).filter(([key]) => !fields.includes(key)));
  return JSON.stringify({ ...envelope, data: kept });
}

/** POST routes of a project, unless they opted out. */
function appliesTo(route: RouteOptions): boolean {
  const methods = [route.method].flat();
  return methods.includes('POST') && route.url.startsWith('/v2/projects/:project_id') && route.config?.idempotency !== false;
}

function hooks<T>(existing: T | T[] | undefined): T[] {
  if (existing === undefined) return [];
  return Array.isArray(existing) ? existing : [existing];
}
