import { describe, expect, it } from 'vitest';
import { expectError, forEachCase } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { operationName, projectOperations } from '../support/operations.all.js';
import { concreteUrl, projectRoutes } from '../support/routes.js';
import { securityCases } from '../support/security.js';


/**
 * What every project route shares in authentication and project access, proven once as a table
 * over all of them on one harness: 401 without a key or with any key that is not a live one, 403
 * for another project's key or another project's id, both before the body is read and before the
 * route looks for its resources, and nothing changes when a request is refused. The rows are every
 * route's Operation (found by file name, test/support/operations.all.ts), and the first test fails
 * for a registered route that has none.
 */

const h = useHarness();

it('has a row for every project route the app registers (and no row without a route)', () => {
  const registered = projectRoutes(h.app)
    .filter((r) => r.method !== 'HEAD')
    .map((r) => operationName(r.method, r.url));
  expect(projectOperations.map((op) => op.name)).toStrictEqual([...new Set(registered)].sort((a, b) => a.localeCompare(b)));
});

it('answers 401 without a key, and 403 with another project’s key, before looking for resources that do not exist', async () => {
  const victim = await h.tenant();
  const other = await h.tenant();
  // Ids that name nothing: with the project's own key these routes would answer 404 or 422.
  const routes = projectRoutes(h.app).filter((r) => r.method !== 'HEAD');
  await forEachCase(
    routes.map((r) => [`${r.method} ${r.url}`, r] as const),
    async (route) => {
      const url = concreteUrl(route, victim.projectId);
      const body = ['GET', 'DELETE'].includes(route.method) ? {} : { payload: { not: 'valid' } };
      const method = route.method as 'GET';
      const anonymous = await h.app.inject({ method, url, ...body });
      expectError(anonymous, { status: 401, code: 'UNAUTHORIZED', method, path: url.split('?')[0]! });
      const foreign = await h.app.inject({ method, url, ...body, headers: other.headers });
      expectError(foreign, { status: 403, code: 'FORBIDDEN', method, path: url.split('?')[0]! });
    },
  );
});

describe.each(projectOperations.map((op) => [op.name, op] as const))('%s', (_name, op) => {
  securityCases(op, () => h);
});
