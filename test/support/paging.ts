import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectError } from './api.js';
import { createHarness, type Harness } from './harness.js';
import type { Operation } from './operations.js';

const LIMIT = 'limit must be an integer from 1 to 100';
const OFFSET = 'offset must be a non-negative integer';

/** Malformed `limit` and `offset` values, with the message each gets (issue 6 item 7). */
export const MALFORMED_PAGING: [string, string][] = [
  ['limit=0', LIMIT],
  ['limit=101', LIMIT],
  ['limit=-1', LIMIT],
  ['limit=1.5', LIMIT],
  ['limit=abc', LIMIT],
  ['limit=', LIMIT],
  ['limit=1e3', LIMIT],
  ['limit=1&limit=2', LIMIT],
  ['offset=-1', OFFSET],
  ['offset=1.5', OFFSET],
  ['offset=abc', OFFSET],
  ['offset=', OFFSET],
];

/**
 * The 422s of a list route's paging, with exact messages: `op.prepare` seeds the project and gives
 * the list URL, whose own paging query is replaced by each malformed one.
 */
export function describePagingErrors(op: Operation): void {
  describe(`${op.name}: malformed paging`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness();
    });
    afterAll(() => h.close());

    it.each(MALFORMED_PAGING)('answers 422 for ?%s', async (query, message) => {
      const t = await h.tenant();
      const { url } = await op.prepare(h, t);
      const path = url.split('?')[0]!;
      const res = await t.request({ method: 'GET', url: `${path}?${query}` });
      expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
    });
  });
}
