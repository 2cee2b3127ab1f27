import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { sendError } from '../http/errors.js';

/**
 * While the app closes (SIGTERM), a request that still arrives on an open keep-alive connection
 * is answered 503 in the envelope with `Connection: close`, so the client retries elsewhere.
 * Fastify's own answer to it (`return503OnClosing`) is a bare body outside the envelope, hence
 * this hook instead. Requests already in flight are not affected: they finish.
 */
export function registerDraining(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    return sendError(reply, new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry the request'));
  });
}
