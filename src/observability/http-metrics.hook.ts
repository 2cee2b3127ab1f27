import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';

/**
 * Counts every answered request and its latency under its route pattern: raw URLs carry project
 * and user ids, and one label value per id would grow the series without bound.
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}
