import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/**
 * Every route the app serves, read from its OpenAPI document (`app.swagger()`, which
 * @fastify/swagger builds from every registered route's schema), so suites that must cover "every
 * route" (cross-project access, the Idempotency-Key rule, list conventions) pick up routes added
 * later without anyone listing them. Each GET also answers HEAD, as Fastify exposes it.
 */

export interface RecordedRoute {
  method: string;
  /** Fastify's form: `/v2/projects/:project_id/memberships/:user_id/extend`. */
  url: string;
  /** Whether the route takes an Idempotency-Key (every project POST that has not opted out). */
  idempotent: boolean;
  /** The names of its query parameters. */
  query: string[];
}

interface Operation {
  parameters?: Array<{ in: string; name: string }>;
}

export const PROJECT_PREFIX = '/v2/projects/:project_id';

/** The routes `app` serves under /v2/projects/:project_id, one entry per method. */
export function projectRoutes(app: FastifyInstance): RecordedRoute[] {
  const document = app.swagger() as { paths: Record<string, Record<string, Operation>> };
  const routes: RecordedRoute[] = [];
  for (const [openApiPath, operations] of Object.entries(document.paths)) {
    const url = openApiPath.replace(/\{([A-Za-z_]+)\}/g, ':$1');
    if (url !== PROJECT_PREFIX && !url.startsWith(`${PROJECT_PREFIX}/`)) continue;
    for (const [method, operation] of Object.entries(operations)) {
      const parameters = operation.parameters ?? [];
      const route = {
        method: method.toUpperCase(),
        url,
        idempotent: parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
      };
      routes.push(route);
      if (route.method === 'GET') routes.push({ ...route, method: 'HEAD', idempotent: false });
    }
  }
  if (routes.length === 0) throw new Error('The OpenAPI document lists no project route');
  return routes;
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
