import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectsStore } from '../../src/store/projects.store.js';
import { expectError, projectState } from './api.js';
import { createHarness, type Harness, type Tenant } from './harness.js';
import { pathOf, type Operation } from './operations.js';

/**
 * The one generator of security cases (STYLE.md: "the security cases produced by one shared
 * generator"). For an operation it proves DESIGN.md's check order — auth (401) and project access
 * (403) come before validation (422) and existence (404) — and that a refused request changes
 * nothing: no membership, webhook or outbox row of either project moves.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A key of the right shape that no project has: `tk_live_` + 43 base62 characters. */
export function unknownKey(): string {
  const bytes = randomBytes(43);
  return 'tk_live_' + Array.from(bytes, (b) => BASE62[b % 62]).join('');
}

export function describeSecurity(op: Operation): void {
  describe(`${op.name}: security`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness();
    });
    afterAll(() => h.close());

    const prepare = (t: Tenant) => op.prepare(h, t);

    /** Sends `op`'s request for `victim` with `authorization` (absent when undefined). */
    async function attempt(victim: Tenant, authorization: string | undefined, override: { url?: (url: string) => string; payload?: unknown } = {}) {
      const prepared = await prepare(victim);
      const url = override.url ? override.url(prepared.url) : prepared.url;
      const payload = 'payload' in override ? override.payload : prepared.payload;
      const before = await projectState(h, victim.projectId);
      const res = await h.app.inject({
        method: op.method,
        url,
        ...(payload === undefined ? {} : { payload: payload as object }),
        headers: authorization === undefined ? {} : { authorization },
      });
      // A refused request leaves the project exactly as it was.
      expect(await projectState(h, victim.projectId), res.body).toStrictEqual(before);
      return { res, path: pathOf(url) };
    }

    function expectRefused(res: Awaited<ReturnType<typeof attempt>>['res'], status: 401 | 403, path: string, secret?: string) {
      expectError(res, {
        status,
        code: status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN',
        method: op.method,
        path,
      });
      // Credentials are never echoed back.
      if (secret) expect(res.body).not.toContain(secret);
    }

    it('succeeds with the project’s own key (the control for every case below)', async () => {
      const t = await h.tenant();
      const { url, payload } = await prepare(t);
      const res = await t.request({ method: op.method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
      expect(res.statusCode, res.body).toBe(op.successStatus);
    });

    it('answers 401 UNAUTHORIZED without an Authorization header', async () => {
      const t = await h.tenant();
      const { res, path } = await attempt(t, undefined);
      expectRefused(res, 401, path);
    });

    it.each([
      ['Basic credentials', () => `Basic ${Buffer.from('user:password').toString('base64')}`],
      ['Basic with the project’s key', (t: Tenant) => `Basic ${t.key}`],
      ['the bare key without a scheme', (t: Tenant) => t.key],
      ['a garbage bearer token', () => 'Bearer garbage'],
      ['a bearer token of the wrong prefix', () => `Bearer tk_test_${'a'.repeat(43)}`],
      ['a truncated key', (t: Tenant) => `Bearer ${t.key.slice(0, 20)}`],
      ['the key with a character changed into a non-base62 one', (t: Tenant) => `Bearer ${t.key.slice(0, -1)}!`],
      ['an empty bearer', () => 'Bearer '],
      ['two tokens', (t: Tenant) => `Bearer ${t.key} ${t.key}`],
    ])('answers 401 UNAUTHORIZED for %s', async (_what, header) => {
      const t = await h.tenant();
      const authorization = header(t);
      const { res, path } = await attempt(t, authorization);
      expectRefused(res, 401, path, t.key);
    });

    it('answers 401 UNAUTHORIZED for a well-formed key that does not exist', async () => {
      const t = await h.tenant();
      const key = unknownKey();
      expect(key).toMatch(/^tk_live_[0-9A-Za-z]{43}$/);
      const { res, path } = await attempt(t, `Bearer ${key}`);
      expectRefused(res, 401, path, key);
    });

    it('answers 401 UNAUTHORIZED for a revoked key of the project', async () => {
      const t = await h.tenant();
      const issued = await h.services.projects.createKey(t.projectId, 'to revoke', 'test');
      if (!issued.ok) throw issued.error;
      // Revoked before its first use, so no cached lookup can outlive the revocation.
      await new ProjectsStore(h.database.db).revokeKey(issued.value.metadata.id, 'test');
      const { res, path } = await attempt(t, `Bearer ${issued.value.key}`);
      expectRefused(res, 401, path, issued.value.key);
    });

    it('answers 403 FORBIDDEN for a key of another project, and neither project changes', async () => {
      const victim = await h.tenant();
      const other = await h.tenant();
      const otherBefore = await projectState(h, other.projectId);
      const { res, path } = await attempt(victim, other.headers.authorization);
      expectRefused(res, 403, path, other.key);
      expect(await projectState(h, other.projectId)).toStrictEqual(otherBefore);
    });

    it.each([
      ['a project that does not exist', () => randomUUID()],
      ['a project id that is not a UUID', () => 'not-a-project'],
    ])('answers 403 FORBIDDEN for %s', async (_what, projectId) => {
      const t = await h.tenant();
      const id = projectId();
      const { res, path } = await attempt(t, t.headers.authorization, { url: (url) => url.replace(t.projectId, id) });
      expect(path).toContain(`/v2/projects/${id}/`);
      expectRefused(res, 403, path);
    });

    if (op.invalidPayload !== undefined) {
      it('answers 401 before validating the body', async () => {
        const t = await h.tenant();
        const { res, path } = await attempt(t, undefined, { payload: op.invalidPayload });
        expectRefused(res, 401, path);
      });

      it('answers 403 before validating the body', async () => {
        const t = await h.tenant();
        const other = await h.tenant();
        const { res, path } = await attempt(t, other.headers.authorization, { payload: op.invalidPayload });
        expectRefused(res, 403, path);
      });

      it('answers 401 before parsing a malformed JSON body', async () => {
        const t = await h.tenant();
        const prepared = await prepare(t);
        const before = await projectState(h, t.projectId);
        const res = await h.app.inject({
          method: op.method,
          url: prepared.url,
          payload: '{"broken": ',
          headers: { 'content-type': 'application/json' },
        });
        expectRefused(res, 401, pathOf(prepared.url));
        expect(await projectState(h, t.projectId)).toStrictEqual(before);
      });
    }
  });
}
