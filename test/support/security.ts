import { randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { ProjectsStore } from '../../src/store/projects.store.js';
import { expectError, forEachCase, projectState } from './api.js';
import type { Harness, Tenant } from './harness.js';
import { pathOf, type Operation } from './operations.js';

/**
 * The security cases every project route shares (produced by one shared generator, not copied
 * per route), run for every route by test/http/shared.security.test.ts. For an operation
 * they prove the check order (docs/errors.md, "Check order") — auth (401) and project access (403) come before
 * validation (422) and existence (404) — and that a refused request changes nothing: no row of
 * the project moves. Variants of one behaviour (the malformed Authorization headers, say) share
 * one tenant and one prepared request, and each is still asserted on its own.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A key of the right shape that no project has: `tk_live_` + 43 base62 characters. */
export function unknownKey(): string {
  const bytes = randomBytes(43);
  return 'tk_live_' + Array.from(bytes, (b) => BASE62[b % 62]).join('');
}

/** Authorization headers that identify no key, for a project whose key is `t.key`. */
const MALFORMED: [string, (t: Tenant) => string][] = [
  ['Basic credentials', () => `Basic ${Buffer.from('user:password').toString('base64')}`],
  ['Basic with the project’s key', (t) => `Basic ${t.key}`],
  ['the bare key without a scheme', (t) => t.key],
  ['a garbage bearer token', () => 'Bearer garbage'],
  ['a bearer token of the wrong prefix', () => `Bearer tk_test_${'a'.repeat(43)}`],
  ['a truncated key', (t) => `Bearer ${t.key.slice(0, 20)}`],
  ['the key with a character changed into a non-base62 one', (t) => `Bearer ${t.key.slice(0, -1)}!`],
  ['an empty bearer', () => 'Bearer '],
  ['two tokens', (t) => `Bearer ${t.key} ${t.key}`],
];

/** `op`'s security cases on the harness `harness()` returns (the caller creates and closes it). */
export function securityCases(op: Operation, harness: () => Harness): void {
  /** `op`'s request for `victim`, and a way to send it with other credentials, URL or body. */
  async function target(victim: Tenant) {
    const h = harness();
    const prepared = await op.prepare(h, victim);
    return {
      prepared,
      path: pathOf(prepared.url),
      send(authorization: string | undefined, override: { url?: string; payload?: unknown; contentType?: string } = {}) {
        const payload = 'payload' in override ? override.payload : prepared.payload;
        return h.app.inject({
          method: op.method,
          url: override.url ?? prepared.url,
          ...(payload === undefined ? {} : { payload: payload as object }),
          headers: {
            ...(authorization === undefined ? {} : { authorization }),
            ...(override.contentType === undefined ? {} : { 'content-type': override.contentType }),
          },
        });
      },
    };
  }

  /** Runs `refuse` and proves the project is exactly as it was before. */
  async function unchanged(t: Tenant, refuse: () => Promise<void>) {
    const before = await projectState(harness(), t.projectId);
    await refuse();
    expect(await projectState(harness(), t.projectId)).toStrictEqual(before);
  }

  function expectRefused(res: LightMyRequestResponse, status: 401 | 403, path: string, secret?: string) {
    expectError(res, { status, code: status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', method: op.method, path });
    // Credentials are never echoed back.
    if (secret) expect(res.body).not.toContain(secret);
  }

  it('succeeds with the project’s own key (the control for every case below)', async () => {
    const t = await harness().tenant();
    const { send } = await target(t);
    const res = await send(t.headers.authorization);
    expect(res.statusCode, res.body).toBe(op.successStatus);
  });

  it('answers 401 UNAUTHORIZED without an Authorization header, and nothing changes', async () => {
    const t = await harness().tenant();
    const { send, path } = await target(t);
    await unchanged(t, async () => expectRefused(await send(undefined), 401, path));
  });

  it('answers 401 UNAUTHORIZED to a malformed header, an unknown key and a revoked key, echoing none; nothing changes', async () => {
    const h = harness();
    const t = await h.tenant();
    const unknown = unknownKey();
    expect(unknown).toMatch(/^tk_live_[0-9A-Za-z]{43}$/);
    const issued = await h.services.projects.createKey(t.projectId, 'to revoke', 'test');
    if (!issued.ok) throw issued.error;
    // Revoked before its first use, so no cached lookup can outlive the revocation.
    await new ProjectsStore(h.database.db).revokeKey(issued.value.metadata.id, 'test');
    const revoked = issued.value.key;

    const cases: [string, { header: string; secret: string }][] = [
      ...MALFORMED.map(([what, header]): [string, { header: string; secret: string }] => [what, { header: header(t), secret: t.key }]),
      ['a well-formed key that does not exist', { header: `Bearer ${unknown}`, secret: unknown }],
      ['a revoked key of the project', { header: `Bearer ${revoked}`, secret: revoked }],
    ];
    const { send, path } = await target(t);
    await unchanged(t, () => forEachCase(cases, async ({ header, secret }) => expectRefused(await send(header), 401, path, secret)));
  });

  it('answers 403 FORBIDDEN for a key of another project, and neither project changes', async () => {
    const h = harness();
    const victim = await h.tenant();
    const other = await h.tenant();
    const otherBefore = await projectState(h, other.projectId);
    const { send, path } = await target(victim);
    await unchanged(victim, async () => expectRefused(await send(other.headers.authorization), 403, path, other.key));
    expect(await projectState(h, other.projectId)).toStrictEqual(otherBefore);
  });

  it('answers 403 FORBIDDEN for a project that does not exist, or whose id is not a UUID', async () => {
    const t = await harness().tenant();
    const { send, prepared } = await target(t);
    const cases: [string, string][] = [
      ['a project that does not exist', randomUUID()],
      ['a project id that is not a UUID', 'not-a-project'],
    ];
    await unchanged(t, () =>
      forEachCase(cases, async (id) => {
        const url = prepared.url.replace(t.projectId, id);
        const path = pathOf(url);
        expect(path).toContain(`/v2/projects/${id}/`);
        expectRefused(await send(t.headers.authorization, { url }), 403, path);
      }),
    );
  });

  if (op.invalidPayload !== undefined) {
    it('answers 401, then 403, before validating the body, and 401 before parsing malformed JSON', async () => {
      const h = harness();
      const t = await h.tenant();
      const other = await h.tenant();
      const { send, path } = await target(t);
      type Case = { authorization?: string; payload: unknown; contentType?: string; status: 401 | 403 };
      const cases: [string, Case][] = [
        ['401 before validating', { payload: op.invalidPayload, status: 401 }],
        ['403 before validating', { authorization: other.headers.authorization, payload: op.invalidPayload, status: 403 }],
        ['401 before parsing', { payload: '{"broken": ', contentType: 'application/json', status: 401 }],
      ];
      await unchanged(t, () =>
        forEachCase(cases, async ({ authorization, payload, contentType, status }) =>
          expectRefused(await send(authorization, { payload, ...(contentType ? { contentType } : {}) }), status, path),
        ),
      );
    });
  }
}
