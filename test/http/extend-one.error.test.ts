import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/logger.js';
import {
  createMembership,
  expectError,
  expectInstantFormatError,
  expectNotFutureError,
  failEventInserts,
  INTERNALS,
  MALFORMED_INSTANTS,
  projectState,
} from '../support/api.js';
import { createHarness, future, useHarness, userId, type Harness, type Tenant } from '../support/harness.js';
import { extendOne } from '../support/operations.js';

describe(`${extendOne.name}: errors`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, user: string) => `${t.base}/memberships/${user}/extend`;

  /** A tenant with one membership, the path to extend it, and the project's state before. */
  async function member() {
    const t = await h.tenant();
    const m = await createMembership(t);
    const path = pathFor(t, m.user_id);
    return { t, m, path, before: await projectState(h, t.projectId) };
  }

  describe('422, the two-entry `errors` shape', () => {
    it.each(MALFORMED_INSTANTS)('for %s; nothing changes', async (_what, extend) => {
      const { t, path, before } = await member();
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend } });
      expectInstantFormatError(res, { method: 'PATCH', path });
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    });

    it.each([
      ['no body at all', undefined],
      ['an empty object', '{}'],
      ['an empty JSON body', ''],
      ['[]', '[]'],
      ['null', 'null'],
      ['a JSON string', '"2099-01-01T00:00:00.000Z"'],
      ['a JSON number', String(future().ms)],
      ['a misspelled field', JSON.stringify({ extends: future().iso })],
    ])('for a body that is %s; nothing changes', async (_what, payload) => {
      const { t, path, before } = await member();
      const res = await t.request({
        method: 'PATCH',
        url: path,
        ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }),
      });
      expectInstantFormatError(res, { method: 'PATCH', path });
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    });
  });

  describe('422, the `error` object shape', () => {
    it.each([
      ['a past ISO string', '2020-01-01T00:00:00.000Z'],
      ['a past 13-digit number', 1_000_000_000_000],
      ['a second ago', () => new Date(Date.now() - 1000).toISOString()],
      ['year 0000', '0000-01-01T00:00:00.000Z'],
    ])('for %s: extend must be a future timestamp; nothing changes', async (_what, value) => {
      const { t, path, before } = await member();
      const extend = typeof value === 'function' ? value() : value;
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend } });
      expectNotFutureError(res, { method: 'PATCH', path });
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    });

    it.each([
      ['letters', 'abc'],
      ['digits then letters', '12a'],
      ['a negative number', '-1'],
      ['a decimal', '1.5'],
      ['an exponent', '1e5'],
      ['an encoded space', '%201'],
      ['33 digits', '1'.repeat(33)],
    ])('for a user_id of %s', async (_what, user) => {
      const t = await h.tenant();
      const path = pathFor(t, user);
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend: future().iso } });
      expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'PATCH', path, message: 'user_id must be a string of digits' });
    });

    it('reports the user_id before the body when both are wrong', async () => {
      const t = await h.tenant();
      const path = pathFor(t, 'abc');
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend: 'soon' } });
      expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'PATCH', path, message: 'user_id must be a string of digits' });
    });
  });

  describe('a pinned clock', () => {
    const NOW = new Date('2031-03-01T00:00:00.000Z');
    let pinned: Harness;
    beforeAll(async () => {
      pinned = await createHarness({ clock: { now: () => NOW } });
    });
    afterAll(() => pinned.close());

    it('refuses exactly now (not in the future) in both forms, and accepts one millisecond later', async () => {
      const t = await pinned.tenant();
      const m = await createMembership(t, { endDate: '2031-04-01T00:00:00.000Z' });
      const path = pathFor(t, m.user_id);
      for (const extend of [NOW.getTime(), NOW.toISOString()]) {
        const res = await t.request({ method: 'PATCH', url: path, payload: { extend } });
        expectNotFutureError(res, { method: 'PATCH', path });
      }
      const later = await t.request({ method: 'PATCH', url: path, payload: { extend: NOW.getTime() + 1 } });
      expect(later.statusCode, later.body).toBe(200);
      expect(later.json().data, later.body).toStrictEqual({ new_end_date: '2031-03-01T00:00:00.001Z' });
    });
  });

  describe('404', () => {
    it('for a user without a membership in the project; nothing changes', async () => {
      const { t, before } = await member();
      const user = userId();
      const path = pathFor(t, user);
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend: future().iso } });
      expectError(res, { status: 404, code: 'NOT_FOUND', method: 'PATCH', path, message: `Membership not found for user ${user}` });
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    });

    it('for a user who is a member of another project only; that project is untouched', async () => {
      const { t: other, m, before } = await member();
      const t = await h.tenant();
      const path = pathFor(t, m.user_id);
      const res = await t.request({ method: 'PATCH', url: path, payload: { extend: future().iso } });
      expectError(res, { status: 404, code: 'NOT_FOUND', method: 'PATCH', path });
      expect(await projectState(h, other.projectId)).toStrictEqual(before);
    });

    it('comes after validation: an unknown user with a past date is a 422', async () => {
      const t = await h.tenant();
      const path = pathFor(t, userId());
      const past = await t.request({ method: 'PATCH', url: path, payload: { extend: '2020-01-01T00:00:00.000Z' } });
      expectNotFutureError(past, { method: 'PATCH', path });
      const malformed = await t.request({ method: 'PATCH', url: path, payload: { extend: 'soon' } });
      expectInstantFormatError(malformed, { method: 'PATCH', path });
    });
  });

  describe('500', () => {
    it('hides the failure from the client, logs it with the request id, and changes nothing', async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      });
      const app = await buildApp({ ...h.container, logger: createLogger('error', sink) });
      await app.ready();
      try {
        const { t, path, before } = await member();
        const restore = await failEventInserts(h, t.projectId);
        try {
          const res = await app.inject({ method: 'PATCH', url: path, headers: t.headers, payload: { extend: future(90).iso } });
          expectError(res, { status: 500, code: 'INTERNAL_ERROR', method: 'PATCH', path, message: 'An unexpected error occurred' });
          expect(res.body, res.body).not.toMatch(INTERNALS);
          // The membership update and its outbox row are one statement: neither happened.
          expect(await projectState(h, t.projectId)).toStrictEqual(before);

          const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 50);
          expect(logged, lines.join('\n')).toHaveLength(1);
          expect(logged[0]!.request_id).toBe(res.json().request_id);
          expect(JSON.stringify(logged[0]!.err)).toContain('injected failure');
          // The API key is not in the log.
          expect(lines.join('\n')).not.toContain(t.key);
        } finally {
          await restore();
        }
        // Once the fault is gone the same request goes through.
        const again = await app.inject({ method: 'PATCH', url: path, headers: t.headers, payload: { extend: future(90).iso } });
        expect(again.statusCode, again.body).toBe(200);
      } finally {
        await app.close();
      }
    });
  });
});
