import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { createLiveHarness, type LiveHarness } from './live-harness.js';

/**
 * `POST /v2/projects/{project_id}/integrations/live-updates/tokens`: a
 * short-lived token for a browser, scoped to the project, that opens a live-updates connection.
 */

const URL_OF = (base: string) => `${base}/integrations/live-updates/tokens`;

describe('live-update token minting', () => {
  let lh: LiveHarness;
  beforeAll(async () => {
    lh = await createLiveHarness();
  });
  afterAll(() => lh.close());

  it('mints a 15-minute JWT for the project of the key, in the envelope', async () => {
    const t = await lh.tenant();
    const before = Math.floor(Date.now() / 1000);
    const res = await t.request({ method: 'POST', url: URL_OF(t.base) });
    const data = res.json().data;
    expectSuccess(res, {
      method: 'POST',
      path: URL_OF(t.base),
      message: 'Live-update token created successfully',
      data: { token: expect.any(String), project_id: t.projectId, expires_at: expect.stringMatching(ISO_MS), expires_in: 900 },
    });
    expect(decodeProtectedHeader(data.token)).toStrictEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(data.token);
    expect(claims).toStrictEqual({
      iss: 'tenure',
      aud: 'tenure:live-updates',
      sub: t.projectId,
      key_id: t.keyId,
      iat: expect.any(Number),
      exp: claims.iat! + 900,
      jti: expect.any(String),
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(new Date(data.expires_at).getTime()).toBe(claims.exp! * 1000);
    // The token carries no secret: not the key, nor anything derived from it but its id.
    expect(data.token).not.toContain(t.key);
  });

  it('accepts an empty JSON body and ignores unknown fields', async () => {
    const t = await lh.tenant();
    const empty = await t.request({ method: 'POST', url: URL_OF(t.base), headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode, empty.body).toBe(200);
    const extra = await t.request({ method: 'POST', url: URL_OF(t.base), payload: { ttl: 5 } });
    expect(extra.statusCode, extra.body).toBe(200);
    expect(extra.json().data.expires_in).toBe(900);
  });

  it('mints a token that opens a live-updates connection of that project, and each mint is distinct', async () => {
    const t = await lh.tenant();
    const [a, b] = await Promise.all([1, 2].map(async () => (await t.request({ method: 'POST', url: URL_OF(t.base) })).json().data.token as string));
    expect(a).not.toBe(b);
    const c = lh.client({ token: a, project_id: t.projectId });
    await c.ready();
    expect(await c.act({ action: 'subscribe', channel: 'memberships' }, 'subscribed')).toStrictEqual({ type: 'subscribed', channel: 'memberships' });
  });
});

describe('TENURE_LIVE_TOKEN_TTL_SECONDS and TENURE_LIVE_TOKEN_SECRET', () => {
  let lh: LiveHarness;
  const secret = 's'.repeat(40);
  beforeAll(async () => {
    lh = await createLiveHarness({ env: { TENURE_LIVE_TOKEN_TTL_SECONDS: '60', TENURE_LIVE_TOKEN_SECRET: secret } });
  });
  afterAll(() => lh.close());

  it('mints tokens of the configured lifetime, signed with the configured secret', async () => {
    const t = await lh.tenant();
    const res = await t.request({ method: 'POST', url: URL_OF(t.base) });
    expect(res.statusCode, res.body).toBe(200);
    const { token, expires_in } = res.json().data;
    expect(expires_in).toBe(60);
    const claims = decodeJwt(token);
    expect(claims.exp! - claims.iat!).toBe(60);
    const { jwtVerify } = await import('jose');
    await expect(jwtVerify(token, new TextEncoder().encode(secret))).resolves.toBeTruthy();
    const c = lh.client({ token, project_id: t.projectId });
    await c.ready();
  });
});
