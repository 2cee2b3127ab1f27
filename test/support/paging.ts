const LIMIT = 'limit must be an integer from 1 to 100';
const OFFSET = 'offset must be a non-negative integer';

/**
 * Malformed `limit` and `offset` values, with the message each gets: test/http/lists.test.ts asks
 * every list route the app registers for each of them.
 */
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
