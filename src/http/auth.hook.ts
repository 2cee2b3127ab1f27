import type { FastifyInstance } from 'fastify';
import type { AuthService, Principal } from '../domain/projects/auth.service.js';
import type { RequestLimiter } from '../ratelimit/limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

/**
 * The API's onRequest chain, in DESIGN.md's order: limit by IP → authenticate (401) → limit by
 * key → project access (403). It runs before the body is read, so an unauthenticated client
 * never gets its body parsed; validation (422) and existence (404) come after it.
 */
export function registerAuth(app: FastifyInstance, auth: AuthService, limiter: RequestLimiter): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request, reply) => {
    await limiter.byIp(request, reply);
    const result = await auth.authenticate(request.headers.authorization);
    if (!result.ok) throw result.error;
    request.principal = result.value;
    await limiter.byKey(result.value.keyId, request, reply);
    const projectId = (request.params as { project_id?: string }).project_id;
    if (projectId !== undefined) {
      const denied = auth.authorize(result.value, projectId);
      if (denied) throw denied;
    }
  });
}
