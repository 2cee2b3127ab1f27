import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/webhooks/ssrf-guard.js';
import { ALLOW_PRIVATE_HINT } from '../../src/domain/webhooks/webhooks.service.js';
import { createMembership, expectError, webhookRows } from '../support/api.js';
import { attemptRows, createHook, createWebhookHarness, deliveryRows, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * The SSRF guard end to end: refused at creation (422), refused again at every send (a failed
 * attempt: DNS may have changed since), connections pinned to the checked address, redirects
 * never followed.
 */

/**
 * Names this test controls; any other name does not resolve. `rebind.example` answers a public
 * address once, then loopback. Every name asked is kept in `lookups`.
 */
const lookups: string[] = [];
function testResolver(): Resolver {
  let rebindCalls = 0;
  return async (host) => {
    lookups.push(host);
    const table: Record<string, string[]> = {
      'public.example': ['93.184.215.14'],
      'loopback.example': ['127.0.0.1'],
      'metadata.example': ['169.254.169.254'],
      'private6.example': ['fd00::1'],
      'receiver.test': ['127.0.0.1'],
    };
    if (host === 'rebind.example') table[host] = rebindCalls++ === 0 ? ['93.184.215.14'] : ['127.0.0.1'];
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe('SSRF guard with private targets refused (the default)', () => {
  let w: WebhookHarness;
  beforeAll(async () => {
    w = await createWebhookHarness({ allowPrivate: false, resolve: testResolver() });
  });
  afterAll(() => w.close());

  it.each([
    ['loopback', 'https://127.0.0.1/hook', 'url host 127.0.0.1 is a loopback, private, link-local or otherwise reserved address'],
    ['IPv6 loopback', 'https://[::1]/hook', 'url host ::1 is a loopback'],
    ['a private 10.x address', 'https://10.0.0.8:8443/hook', 'url host 10.0.0.8 is a loopback'],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data/', 'url host 169.254.169.254 is a loopback'],
    ['loopback written as one number', 'https://2130706433/hook', 'url host 127.0.0.1 is a loopback'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook', 'url host ::ffff:7f00:1 is a loopback'],
    ['CGNAT', 'https://100.64.1.1/hook', 'url host 100.64.1.1 is a loopback'],
    ['localhost, a loopback name whatever DNS says', 'https://localhost/hook', 'url host localhost is a loopback name'],
    ['a subdomain of localhost', 'https://api.localhost./hook', 'url host api.localhost. is a loopback name'],
    ['IPv4-translated IPv6 loopback', 'https://[::ffff:0:7f00:1]/hook', 'url host ::ffff:0:7f00:1 is a loopback'],
    ['a documentation address (TEST-NET-1)', 'https://192.0.2.1/hook', 'url host 192.0.2.1 is a loopback'],
    ['a documentation address (IPv6)', 'https://[2001:db8::1]/hook', 'url host 2001:db8::1 is a loopback'],
    ['a well-known port of another service', 'https://public.example:22/hook', 'url port must be 80, 443, or 1024 and above'],
    ['localhost, named with the setting that allows it', 'https://localhost:8080/hook', 'is a loopback name (a receiver on this machine or a private network is allowed only when the server runs with TENURE_WEBHOOK_ALLOW_PRIVATE=true)'],
  ])('answers 422 at creation for %s', async (_what, url, message) => {
    const t = await w.tenant();
    const path = `${t.base}/integrations/webhooks`;
    const res = await t.request({ method: 'POST', url: path, payload: { url } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringContaining(message) });
    expect(await webhookRows(w.h, t.projectId)).toStrictEqual([]);
  });

  it.each([
    ['loopback.example', '127.0.0.1'],
    ['metadata.example', '169.254.169.254'],
    ['private6.example', 'fd00::1'],
  ])('refuses a name resolving to a private address (%s → %s), without naming the address', async (host, address) => {
    const t = await w.tenant();
    const created = await w.h.services.webhooks.create(t.projectId, `https://${host}/hook`);
    expect(created.ok).toBe(false);
    expect(created.ok ? null : [created.error.code, created.error.message]).toStrictEqual([
      'VALIDATION_ERROR',
      `url host ${host} resolves to a loopback, private, link-local or otherwise reserved address (${ALLOW_PRIVATE_HINT})`,
    ]);
    expect(created.ok ? '' : created.error.message).not.toContain(address);
  });

  it('takes ports 80, 443 and 1024 and above', async () => {
    const t = await w.tenant();
    for (const url of ['https://public.example/a', 'http://public.example:80/b', 'https://public.example:443/c', 'https://public.example:1024/d', 'https://public.example:65535/e']) {
      const created = await w.h.services.webhooks.create(t.projectId, url.replace('http://', 'https://'));
      expect(created.ok, url).toBe(true);
    }
    for (const port of [1, 21, 25, 444, 1023]) {
      const created = await w.h.services.webhooks.create(t.projectId, `https://public.example:${port}/hook`);
      expect(created.ok ? null : created.error.message, String(port)).toMatch(/^url port must be 80, 443, or 1024 and above \(.*TENURE_WEBHOOK_ALLOW_PRIVATE=true\)$/);
    }
  });

  it('at the cap, refuses before resolving the name', async () => {
    const t = await w.tenant();
    for (let i = 0; i < w.h.config.webhooks.maxPerProject; i++) {
      expect((await w.h.services.webhooks.create(t.projectId, `https://public.example/${i}`)).ok).toBe(true);
    }
    lookups.length = 0;
    const refused = await w.h.services.webhooks.create(t.projectId, 'https://cap.example/hook');
    expect(refused.ok ? null : refused.error.code).toBe('CONFLICT');
    expect(lookups).toStrictEqual([]);
  });

  it('accepts a public name, and a name that does not resolve (yet)', async () => {
    const t = await w.tenant();
    expect((await w.h.services.webhooks.create(t.projectId, 'https://public.example/hook')).ok).toBe(true);
    expect((await w.h.services.webhooks.create(t.projectId, 'https://not-yet.example/hook')).ok).toBe(true);
  });

  it('checks again at send: a name that now resolves to loopback is a failed attempt, nothing is sent', async () => {
    const t = await w.tenant();
    const created = await w.h.services.webhooks.create(t.projectId, 'https://rebind.example/hook');
    expect(created.ok).toBe(true);
    await createMembership(t);
    await w.worker.drain();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await attemptRows(w.h, delivery!.id)).toMatchObject([
      {
        attempt: 1,
        status_code: null,
        error_class: 'blocked_address',
        error_message: 'rebind.example resolves to a loopback, private, link-local or otherwise reserved address',
        outcome: 'retry',
      },
    ]);
  });

  it('records a name that does not resolve at send as a dns failure, retried', async () => {
    const t = await w.tenant();
    expect((await w.h.services.webhooks.create(t.projectId, 'https://not-yet.example/hook')).ok).toBe(true);
    await createMembership(t);
    await w.worker.drain();
    const [delivery] = await deliveryRows(w.h, t.projectId);
    expect(await attemptRows(w.h, delivery!.id)).toMatchObject([
      { error_class: 'dns', error_message: 'not-yet.example does not resolve (ENOTFOUND)', outcome: 'retry' },
    ]);
  });
});

describe('SSRF guard with TENURE_WEBHOOK_ALLOW_PRIVATE on', () => {
  let w: WebhookHarness;
  let receiver: Receiver;
  let elsewhere: Receiver;
  beforeAll(async () => {
    w = await createWebhookHarness({ allowPrivate: true, resolve: testResolver() });
    elsewhere = await startReceiver();
    receiver = await startReceiver(() => ({ status: 302, headers: { location: `${elsewhere.url}/stolen` } }));
  });
  afterAll(async () => {
    await w.close();
    await receiver.close();
    await elsewhere.close();
  });

  it('connects to the address it resolved and checked, keeping the host name in Host', async () => {
    const t = await w.tenant();
    const port = new URL(elsewhere.url).port;
    // receiver.test exists only in this test's resolver: the system's DNS never sees it.
    await createHook(t, `http://receiver.test:${port}/pinned`);
    await createMembership(t);
    await w.worker.drain();
    const got = elsewhere.requests.find((r) => r.path === '/pinned');
    expect(got?.headers.host).toBe(`receiver.test:${port}`);
  });

  it('does not follow a redirect (to another host or anywhere): a failed attempt, retried', async () => {
    const t = await w.tenant();
    await createHook(t, `${receiver.url}/redirect`);
    await createMembership(t);
    await w.worker.drain();
    expect(receiver.requests.filter((r) => r.path === '/redirect')).toHaveLength(1);
    expect(elsewhere.requests.filter((r) => r.path === '/stolen')).toStrictEqual([]);
    const [delivery] = await deliveryRows(w.h, t.projectId);
    expect(await attemptRows(w.h, delivery!.id)).toMatchObject([{ status_code: 302, error_class: 'redirect', outcome: 'retry' }]);
  });
});
