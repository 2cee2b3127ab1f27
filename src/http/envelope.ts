import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../domain/errors.js';

/**
 * The response envelope (docs/api-contract.md, "The envelope").
 * Every body — success or error, 404 and 429 included — comes from the functions in this file.
 */

export interface RequestContext {
  request_id: string;
  method: string;
  path: string;
}

export function contextOf(request: FastifyRequest): RequestContext {
  const url = request.url;
  const q = url.indexOf('?');
  return { request_id: request.id, method: request.method, path: q === -1 ? url : url.slice(0, q) };
}

export interface Success<T> {
  total?: number;
  /** The page a list was cut to, for lists whose original shows it (users: docs/api-keys-settings-users.md). */
  page?: { limit: number; offset: number };
  /** On a cursor page (docs/idempotency-and-lists.md, "Cursor pages"): the next page's cursor, null on the last. */
  next_cursor?: string | null;
  message: string;
  data: T;
}

/** Sends a success envelope. Field order follows the original API's envelope table (docs/api-contract.md). */
export function sendSuccess<T>(reply: FastifyReply, status: number, body: Success<T>) {
  const ctx = contextOf(reply.request);
  const envelope = {
    ok: true,
    ...ctx,
    code: status,
    ...(body.total === undefined ? {} : { total: body.total }),
    ...(body.page === undefined ? {} : { limit: body.page.limit, offset: body.page.offset }),
    ...(body.next_cursor === undefined ? {} : { next_cursor: body.next_cursor }),
    message: body.message,
    data: body.data,
  };
  return reply.code(status).send(envelope);
}

/** The error body for an AppError, in the one of the three shapes it calls for. */
export function errorBody(ctx: RequestContext, error: AppError): Record<string, unknown> {
  const head = { ...ctx, code: error.status };
  if (error.code === 'RATE_LIMIT_EXCEEDED' || error.code === 'ACCESS_SUSPENDED') {
    // The original API's 429 shape: no `ok`, and the identifier field is `code`, not `error_code`.
    return { ...head, error: { message: error.message, code: error.code, retry_after: error.retryAfter ?? 1 } };
  }
  if (error.errors) return { ok: false, ...head, errors: error.errors };
  return { ok: false, ...head, error: { error_code: error.code, message: error.message } };
}
