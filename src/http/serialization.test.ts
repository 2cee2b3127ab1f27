import { describe, expect, it } from 'vitest';
import { buildSerializer } from './serialization.js';

const route = (schema: unknown, httpStatus = '200') => ({ method: 'GET', url: '/x', httpStatus, schema });
const Thing = { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } } };

describe('response serializers', () => {
  it('compile a schema once, for every route and status that declares it, in every app of the process', () => {
    const a = buildSerializer({}, {});
    const b = buildSerializer(undefined, undefined);
    const first = a(route(Thing));
    expect(a(route(Thing, '404'))).toBe(first);
    expect(b(route(Thing))).toBe(first);
    expect(first({ id: 'x', n: 2, secret: 'dropped' })).toBe('{"id":"x","n":2}');
  });

  it('compile an equal but distinct schema on its own', () => {
    const compile = buildSerializer({}, {});
    expect(compile(route({ ...Thing }))).not.toBe(compile(route(Thing)));
  });

  it('keep serializers to the app when it has schemas of its own or options', () => {
    const own = buildSerializer({ 'x#': { $id: 'x#', type: 'string' } }, {})(route(Thing));
    expect(own).not.toBe(buildSerializer({}, {})(route(Thing)));
    const withOptions = buildSerializer({}, { rounding: 'ceil' });
    expect(withOptions(route(Thing))).not.toBe(buildSerializer({}, {})(route(Thing)));
    expect(withOptions(route(Thing))).toBe(withOptions(route(Thing)));
  });
});
