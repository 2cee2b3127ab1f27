import { describe, expect, it } from 'vitest';
import { startWorkerRuntime } from '../../src/worker-runtime.js';
import { onPostgres, useHarness } from '../support/harness.js';

/**
 * Embedded storage maintenance (docs/operations.md, "Embedded storage maintenance"): the worker
 * runtime starts the vacuumer on PGlite, which runs no autovacuum, and not on PostgreSQL
 * (autovacuum's job). What a vacuum pass reclaims: test/ops/embedded-vacuum.test.ts.
 */

const h = useHarness();

describe(`embedded storage maintenance (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('the worker runtime vacuums on embedded storage only', async () => {
    const runtime = await startWorkerRuntime(h.container, { stopGraceMs: 0 });
    await runtime.stop();
    expect(runtime.vacuumer === null).toBe(onPostgres);
  });
});
