import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { projectOperations } from '../support/operations.all.js';
import { transportCases, unreachableApp } from '../support/transport.js';

/**
 * What every project route shares below its own rules, proven once as a table over all of them
 * on one harness: the request id, 405 with the path's Allow and 404 under another version, JSON
 * parsing, 415 and 413 for routes with a body, and 503 when the database is unreachable. The rows
 * are every route's Operation (test/support/operations.all.ts; shared.security.test.ts proves
 * every registered route has one).
 */

let h: Harness;
let unreachable: { app: FastifyInstance; close(): Promise<void> };
beforeAll(async () => {
  [h, unreachable] = await Promise.all([createHarness(), unreachableApp()]);
});
afterAll(async () => {
  await unreachable?.close();
  await h?.close();
});

describe.each(projectOperations.map((op) => [op.name, op] as const))('%s', (_name, op) => {
  transportCases(op, () => h, () => unreachable.app);
});
