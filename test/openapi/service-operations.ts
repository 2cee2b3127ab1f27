import type { Operation } from '../support/operations.js';

/**
 * The service's own routes (health, readiness, metrics), described like every project route so
 * that the OpenAPI conformance test drives them too. They need no key and no project.
 */

const probe = (path: string): Operation => ({
  name: `GET ${path}`,
  method: 'GET',
  successStatus: 200,
  async prepare() {
    return { url: path };
  },
  allow: 'GET',
  wrongMethod: 'POST',
});

export const healthz = probe('/healthz');
export const readyz = probe('/readyz');
export const metrics = probe('/metrics');
