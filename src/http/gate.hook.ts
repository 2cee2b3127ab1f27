import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { AuthService, Principal } from '../domain/projects/auth.service.js';
import type { Platform } from '../domain/targets/target.view.js';
import { clientKey } from '../ratelimit/client-key.js';
import { rateLimitHeaders, refusal, secondsToWait } from '../ratelimit/headers.js';
import type { Charge, Decision, RateLimiter } from '../ratelimit/rate-limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** A route anyone may call (health checks): no key, and no per-key limits. */
    public?: boolean;
    /** Health probes and metrics scrapes: no key and no limits, so a busy node still answers them. */
    probe?: boolean;
    /** A route that only reads although it is not a GET: read-only keys may call it (docs/api-keys-settings-users.md, "Scopes: full and read keys"). */
    reads?: boolean;
    /**
     * A platform's callback (Stripe events, Telegram updates): authenticated by the platform's
     * signature or secret token in the route, not by a key, and bounded per endpoint (the route
     * parameter `endpoint` names it) instead of per IP: a platform sends every customer's
     * callbacks from a small pool of addresses, in bursts (a renewal run, a catch-up after an
     * outage). A refusal is a 429 the platform retries, and never counts toward a suspension.
     */
    callback?: { platform: 'stripe' | Platform; endpoint: string };
  }
}

/**
 * The gate every request passes before its body is read, in docs/errors.md's check order: limit by IP →
 * authenticate (401) → limit by key → project access, then the key's scope (403: a read-only key
 * on a route that writes). Unknown routes and public routes are limited by IP only. Validation
 * (422) and existence (404) come later, in the route.
 *
 * Platform callbacks (`callback`) are outside this order: their own bound per endpoint, no IP
 * policy, no suspension; the route checks the platform's signature.
 *
 * A key already in the auth cache is checked with all its policies in one limiter call (one Redis
 * round trip). A key that must be looked up is limited by IP first, so guessing keys is throttled
 * before it reaches the database.
 */
export function registerGate(
  app: FastifyInstance,
  deps: { auth: AuthService; limiter: RateLimiter; onRefused?: (policy: string) => void },
): void {
  const { auth, limiter, onRefused } = deps;
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.probe) return;
    // An IPv6 client is counted by its /64 (clientKey), for its budget and its suspension alike.
    const ip = `ip:${clientKey(request.ip)}`;
    const decisions: Decision[] = [];
    const callback = request.routeOptions.config?.callback;
    if (callback) {
      const endpoint = (request.params as Record<string, string | undefined>)[callback.endpoint] ?? '';
      const verdict = await limiter.consume([{ policy: 'callback', subject: `callback:${callback.platform}:${endpoint}` }]);
      reply.headers(rateLimitHeaders(verdict.decisions, limiter.config, Date.now()));
      const refused = refusal(verdict.decisions);
      if (refused) {
        onRefused?.(refused.policy);
        const seconds = secondsToWait(refused.msBeforeReset);
        throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded. Please retry after ${seconds} seconds.`, undefined, seconds);
      }
      return;
    }
    const charge = async (charges: Charge[]) => {
      const verdict = await limiter.consume(charges);
      decisions.push(...verdict.decisions);
      reply.headers(rateLimitHeaders(decisions, limiter.config, Date.now()));
      if (verdict.suspended) {
        onRefused?.('suspension');
        const seconds = secondsToWait(verdict.suspended.msLeft);
        throw new AppError(
          'ACCESS_SUSPENDED',
          `Access suspended after repeated rate limit violations. Please retry after ${seconds} seconds.`,
          undefined,
          seconds,
        );
      }
      const refused = refusal(verdict.decisions);
      if (refused) {
        onRefused?.(refused.policy);
        const seconds = secondsToWait(refused.msBeforeReset);
        await limiter.recordRefusal(refused.subject, seconds * 1000);
        throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded. Please retry after ${seconds} seconds.`, undefined, seconds);
      }
    };

    if (request.is404 || request.routeOptions.config?.public) {
      await charge([{ policy: 'ip', subject: ip }, { policy: 'burst', subject: ip }]);
      return;
    }

    let result = auth.peek(request.headers.authorization);
    if (result?.ok) {
      const key = `key:${result.value.keyId}`;
      await charge([
        { policy: 'ip', subject: ip },
        { policy: 'key', subject: key },
        { policy: 'burst', subject: key },
      ]);
    } else {
      await charge([{ policy: 'ip', subject: ip }]);
      result ??= await auth.authenticate(request.headers.authorization);
      if (!result.ok) {
        await charge([{ policy: 'burst', subject: ip }]);
        throw result.error;
      }
      const key = `key:${result.value.keyId}`;
      await charge([
        { policy: 'key', subject: key },
        { policy: 'burst', subject: key },
      ]);
    }
    request.principal = result.value;
    const projectId = (request.params as { project_id?: string }).project_id;
    if (projectId !== undefined) {
      const denied = auth.authorize(result.value, projectId);
      if (denied) throw denied;
    }
    const outOfScope = auth.authorizeScope(result.value, request.method, request.routeOptions.config?.reads === true);
    if (outOfScope) throw outOfScope;
  });
}
