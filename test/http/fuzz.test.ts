import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectFingerprint, projectState } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { projectOperations } from '../support/operations.all.js';
import type { Operation } from '../support/operations.js';

/**
 * Generated bad input on every project route: each route's valid request
 * (its Operation, test/support/operations*.ts) is mutated by fast-check, a field, the body, a
 * path parameter or the query replaced by hostile values (any JSON, any UTF-16 including NUL and
 * lone surrogates, huge and fractional numbers, deep nesting, unknown keys), and no answer may be
 * a 5xx; an answer that refuses (4xx) must leave the project exactly as it was.
 *
 * The seed is fixed, so CI runs the same cases every time (FUZZ_SEED picks another); FUZZ_RUNS
 * sets the cases per route (`npm run fuzz` runs many more). Rate limits are off: the point is the
 * routes, not the limiter.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

const h = useHarness({ env: { TENURE_RATE_LIMITS: 'false' } });

/** Values no route takes where a valid one stood, and some it might. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom<unknown>('', ' ', '\u0000', '\uD800', 'a\uDFFFb', '0', '-1', '1e400', 'null', 'true', '__proto__', 'x'.repeat(5000)),
  fc.constantFrom<unknown>(0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, Number.MIN_VALUE, 1e20),
  fc.constantFrom<unknown>(null, true, false, [], {}, [[[[[[[[[[]]]]]]]]]], { __proto__: { polluted: true } }),
);

/** Values every field, parameter and query key is also tried with, one by one, before the random cases. */
const EDGE_VALUES: unknown[] = ['', '\u0000', '\uD800', '-1', '99999999999999999999', 'x'.repeat(5000), -1, 1.5, 1e308, 1e20, null, true, [], {}];
const EDGE_TEXT = ['', '0', '-1', '99999999999999999999', '1.5', '1e400', '\u0000', 'null', '..', 'a'.repeat(300)];

/** Text for a URL: anything, percent-encoded as a client would send it. */
const urlText = fc.oneof({ arbitrary: fc.constantFrom(...EDGE_TEXT), weight: 2 }, { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 1 });

/** Query keys the routes take (an unknown key is tried too). */
const QUERY_KEYS = ['limit', 'offset', 'status', 'user_id', 'target_id', 'state', 'search', 'since', 'until'];

type Mutation =
  | { kind: 'field'; path: string[]; value: unknown }
  | { kind: 'add'; key: string; value: unknown }
  | { kind: 'drop'; path: string[] }
  | { kind: 'body'; value: unknown }
  | { kind: 'param'; index: number; text: string }
  | { kind: 'query'; key: string; text: string };

/** Every key path of a JSON value (objects and arrays alike). */
function pathsOf(value: unknown, at: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return at.length > 0 ? [at] : [];
  const inner = Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...at, key]));
  return at.length > 0 ? [at, ...inner] : inner;
}

function mutations(op: Operation, url: string, payload: unknown): fc.Arbitrary<Mutation> {
  const paths = pathsOf(payload);
  const params = paramIndexes(op, url);
  const queryKeys = [...new URL(url, 'http://x').searchParams.keys(), ...QUERY_KEYS];
  const key = fc.oneof({ arbitrary: fc.constantFrom(...queryKeys), weight: 4 }, { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 });
  const options: fc.Arbitrary<Mutation>[] = [fc.record({ kind: fc.constant('query' as const), key, text: urlText })];
  if (params.length > 0) options.push(fc.record({ kind: fc.constant('param' as const), index: fc.constantFrom(...params), text: urlText }));
  if (payload !== undefined) {
    options.push(fc.record({ kind: fc.constant('body' as const), value: hostile }));
    options.push(fc.record({ kind: fc.constant('add' as const), key: fc.string({ unit: 'binary', maxLength: 12 }), value: hostile }));
    if (paths.length > 0) {
      options.push(fc.record({ kind: fc.constant('field' as const), path: fc.constantFrom(...paths), value: hostile }));
      options.push(fc.record({ kind: fc.constant('drop' as const), path: fc.constantFrom(...paths) }));
    }
  }
  return fc.oneof(...options);
}

/** The same kinds of change, with each edge value in each place: what the random cases may miss. */
function edgeCases(op: Operation, url: string, payload: unknown): Mutation[] {
  const queryKeys = [...new Set([...new URL(url, 'http://x').searchParams.keys(), ...QUERY_KEYS])];
  // The query of a route that takes a body is tried by the random cases only: its edges are a list's.
  const queries = op.method === 'GET' ? queryKeys : [];
  return [
    ...queries.flatMap((key) => EDGE_TEXT.map((text): Mutation => ({ kind: 'query', key, text }))),
    ...paramIndexes(op, url).flatMap((index) => EDGE_TEXT.map((text): Mutation => ({ kind: 'param', index, text }))),
    ...(payload === undefined ? [] : pathsOf(payload).flatMap((path) => EDGE_VALUES.map((value): Mutation => ({ kind: 'field', path, value })))),
    ...(payload === undefined ? [] : EDGE_VALUES.map((value): Mutation => ({ kind: 'body', value }))),
  ];
}

/** The indexes of the URL's path segments that are parameters other than the project id. */
function paramIndexes(op: Operation, url: string): number[] {
  const template = op.name.split(' ')[1]!.split('/');
  const segments = url.split('?')[0]!.split('/');
  return template.flatMap((segment, i) => (/^\{.+\}$/.test(segment) && segment !== '{project_id}' && i < segments.length ? [i] : []));
}

function apply(m: Mutation, url: string, payload: unknown): { url: string; body: string | undefined } {
  const copy = payload === undefined ? undefined : (structuredClone(payload) as unknown);
  const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));
  switch (m.kind) {
    case 'body':
      return { url, body: json(m.value) };
    case 'add':
      return { url, body: json(typeof copy === 'object' && copy !== null ? Object.assign(copy, { [m.key]: m.value }) : copy) };
    case 'field':
    case 'drop': {
      let node = copy as Record<string, unknown>;
      for (const key of m.path.slice(0, -1)) node = node[key] as Record<string, unknown>;
      const last = m.path[m.path.length - 1]!;
      if (m.kind === 'drop') delete node[last];
      else node[last] = m.value;
      return { url, body: json(copy) };
    }
    case 'param': {
      const [path, query] = url.split('?');
      const segments = path!.split('/');
      segments[m.index] = encodeURIComponent(m.text);
      return { url: segments.join('/') + (query === undefined ? '' : `?${query}`), body: json(copy) };
    }
    case 'query':
      return { url: `${url}${url.includes('?') ? '&' : '?'}${encodeURIComponent(m.key)}=${encodeURIComponent(m.text)}`, body: json(copy) };
  }
}

describe.each(projectOperations.map((op) => [op.name, op] as const))('%s', (_name, op) => {
  it(`answers every edge value in every place, and ${RUNS} random mutations, without a 5xx; a refusal changes nothing`, async () => {
    const t = await h.tenant();
    const prepared = await op.prepare(h, t);
    // A read writes nothing by construction. For a write, what the project held before the first
    // request and after each one that succeeded: a refusal must leave every row as it was (compared
    // by fingerprint, one statement; by projectState when they differ, for a readable diff).
    const snapshot = async () => ({ state: await projectState(h, t.projectId), print: await projectFingerprint(h, t.projectId) });
    let before = op.method === 'GET' ? null : await snapshot();
    const check = async (m: Mutation) => {
      const request = apply(m, prepared.url, prepared.payload);
      const res = await t.request({
        method: op.method,
        url: request.url,
        ...(request.body === undefined ? {} : { payload: request.body, headers: { 'content-type': 'application/json' } }),
      });
      expect(res.statusCode, `${op.method} ${request.url} ${request.body?.slice(0, 300)} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
      if (!before) return;
      if (res.statusCode < 400) before = await snapshot();
      else if ((await projectFingerprint(h, t.projectId)) !== before.print) {
        expect(await projectState(h, t.projectId), `${op.method} ${request.url} ${request.body?.slice(0, 300)}`).toStrictEqual(before.state);
        expect.fail(`${op.method} ${request.url} ${request.body?.slice(0, 300)} → ${res.statusCode} changed a column projectState leaves out`);
      }
    };
    for (const m of edgeCases(op, prepared.url, prepared.payload)) await check(m);
    await fc.assert(fc.asyncProperty(mutations(op, prepared.url, prepared.payload), check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });
});
