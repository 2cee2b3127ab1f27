import { randomUUID } from 'node:crypto';
import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * Every route the app registers, recorded by an onRoute hook installed the moment the Fastify
 * instance is created, so suites that must cover "every route" (cross-project access, the
 * Idempotency-Key rule) pick up routes added later without anyone listing them.
 *
 * Use from a test file (vi.mock is hoisted, so the factory imports this module itself):
 *
 *   vi.mock('fastify', async (original) => (await import('../support/routes.js')).recordingFastify(await original()));
 */

export interface RecordedRoute {
  method: string;
  /** Fastify's form: `/v2/projects/:project_id/memberships/:user_id/extend`. */
  url: string;
  config: RouteOptions['config'];
  schema: RouteOptions['schema'];
}

const recorded = new WeakMap<FastifyInstance, RecordedRoute[]>();

type FastifyModule = { default: (...args: unknown[]) => FastifyInstance } & Record<string, unknown>;

export function recordingFastify(original: FastifyModule): FastifyModule {
  const factory = (...args: unknown[]) => {
    const app = original.default(...args);
    const routes: RecordedRoute[] = [];
    recorded.set(app, routes);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url, config: route.config, schema: route.schema });
    });
    return app;
  };
  return { ...original, default: factory, fastify: factory };
}

export const PROJECT_PREFIX = '/v2/projects/:project_id';

/** The routes `app` registered under /v2/projects/:project_id, one entry per method. */
export function projectRoutes(app: FastifyInstance): RecordedRoute[] {
  const routes = recorded.get(app);
  if (!routes) throw new Error("No routes recorded: mock 'fastify' with recordingFastify before building the app");
  return routes.filter((r) => r.url === PROJECT_PREFIX || r.url.startsWith(`${PROJECT_PREFIX}/`));
}

/**
 * A concrete URL for a route in `projectId`. Each other parameter takes its value from `values`
 * (real ids of seeded resources), else a well-formed stand-in: digits for a user id, a setting
 * name for `:key`, a UUID otherwise. A wildcard becomes `x`.
 */
export function concreteUrl(route: RecordedRoute, projectId: string, values: Record<string, string> = {}): string {
  const standIn = (name: string) => (name === 'user_id' ? '123456789012345678' : name === 'key' ? 'timezone_preference' : randomUUID());
  return route.url
    .replace(':project_id', projectId)
    .replace(/:([A-Za-z_]+)/g, (_m, name: string) => values[name] ?? standIn(name))
    .replace('*', 'x');
}
