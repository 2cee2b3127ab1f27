import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { AppError } from '../domain/errors.js';
import { instantFormatError } from '../domain/instant.js';
import { isDatabaseUnavailable } from '../database/connection-loss.js';
import { contextOf, errorBody } from './envelope.js';
import { fieldOf, validationMessage } from './validation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Body fields holding an instant; their schema errors take the original API's two-entry 422 shape (docs/errors.md). */
    instantFields?: readonly string[];
  }
}

/** Sends an AppError as its envelope, with the headers it implies. */
export function sendError(reply: FastifyReply, error: AppError) {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  if (error.status === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(error.status).send(errorBody(contextOf(reply.request), error));
}

/** Maps anything thrown while handling a request onto the error vocabulary. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const e = error as FastifyError;
  if (e.validation) {
    const first = e.validation[0]!;
    const instantFields = request.routeOptions.config?.instantFields ?? [];
    if (e.validationContext === 'body') {
      const field = fieldOf(first as never);
      // A body that is not an object cannot hold the instant either.
      if (instantFields.includes(field) || (field === '' && instantFields.length > 0)) {
        return instantFormatError(field || instantFields[0]!);
      }
    }
    return new AppError('VALIDATION_ERROR', validationMessage(first as never, e.validationContext));
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type; send application/json');
  }
  if (isDatabaseUnavailable(error)) return new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError('BAD_REQUEST', 'Malformed request');
  }
  return new AppError('INTERNAL_ERROR', 'An unexpected error occurred');
}

/**
 * Installs the one error handler, the 404/405 handler and the framework-error hook. A wrong
 * method on a known path is a 405 with `Allow`; Fastify alone would answer 404.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  const known = FindMyWay({ ignoreTrailingSlash: false });
  const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD' && method !== 'OPTIONS') known.on(method as 'GET', route.url, () => undefined);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request);
    // An unreachable database is an outage the operator hears of once per connection
    // (docs/scaling.md, "Outages"), not a fault of tenure's: each request it fails is a warning.
    if (isDatabaseUnavailable(error)) request.log.warn({ err: error }, 'request answered 503: the database is unavailable');
    else if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = contextOf(request).path;
    const allowed = METHODS.filter((m) => known.find(m, path));
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, new AppError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${path}`));
    }
    return sendError(reply, new AppError('NOT_FOUND', `Route ${request.method} ${path} not found`));
  });
}
