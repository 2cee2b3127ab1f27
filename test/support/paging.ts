const LIMIT = 'limit must be an integer from 1 to 100';
const OFFSET = 'offset must be an integer from 0 to 1000000000';
const TEXT = 'must not contain NUL characters or unpaired surrogates';

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
  ['offset=1000000001', OFFSET],
  // Past any database integer: once a 500 (bigint out of range).
  ['offset=99999999999999999999', OFFSET],
  // Coerced to Infinity, which ajv's bounds skip: once a 500.
  ['offset=1e400', 'offset must be a finite number'],
  ['limit=1e400', 'limit must be a finite number'],
  // Text no field holds, in any query parameter, known or not.
  ['limit=1%00', `limit ${TEXT}`],
  ['probe=%00', `probe ${TEXT}`],
];
