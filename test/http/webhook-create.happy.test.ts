import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRows, expectSuccess, UUID, webhookRows } from '../support/api.js';
import { createHarness, useHarness, type Harness, type Tenant } from '../support/harness.js';
import { webhookCreate } from '../support/operations.js';

const HEX_SECRET = /^[0-9a-f]{64}$/;

describe(`${webhookCreate.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant) => `${t.base}/integrations/webhooks`;

  /** Creates a webhook and checks the whole envelope; returns its data. */
  async function create(t: Tenant, url: string, extra: object = {}) {
    const path = pathFor(t);
    const res = await t.request({ method: 'POST', url: path, payload: { url, ...extra } });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data as { url: string; id: string; secret: string };
    expect(Object.keys(data).sort()).toStrictEqual(['id', 'secret', 'url']);
    expect(data.id).toMatch(UUID);
    expect(data.secret).toMatch(HEX_SECRET);
    expectSuccess(res, { method: 'POST', path, message: 'Webhook created successfully', data: { url, id: data.id, secret: data.secret } });
    return data;
  }

  it('creates a webhook: data {url, id (UUID), secret (64 lowercase hex)}, no total', async () => {
    const t = await h.tenant();
    const url = 'https://hooks.example.com/tenure/events';
    const hook = await create(t, url);
    expect(await webhookRows(h, t.projectId)).toStrictEqual([{ id: hook.id, url, secret: hook.secret, enabled: true }]);
  });

  it('gives every webhook its own id and secret', async () => {
    const t = await h.tenant();
    const a = await create(t, 'https://hooks.example.com/a');
    const b = await create(t, 'https://hooks.example.com/a');
    expect(a.id).not.toBe(b.id);
    expect(a.secret).not.toBe(b.secret);
    expect((await webhookRows(h, t.projectId)).map((w) => w.id).sort()).toStrictEqual([a.id, b.id].sort());
  });

  it.each([
    ['a port, path and query', 'https://hooks.example.com:8443/in/tenure?source=tenure&v=2'],
    ['an internationalised host in punycode', 'https://xn--bcher-kva.example/hook'],
    ['a fragment', 'https://hooks.example.com/in#section'],
  ])('accepts a URL with %s, stored as sent', async (_what, url) => {
    const t = await h.tenant();
    const hook = await create(t, url);
    expect((await webhookRows(h, t.projectId))[0]).toMatchObject({ id: hook.id, url });
  });

  it('accepts a URL of exactly 2048 characters', async () => {
    const t = await h.tenant();
    const head = 'https://hooks.example.com/';
    const url = head + 'a'.repeat(2048 - head.length);
    expect(url).toHaveLength(2048);
    await create(t, url);
  });

  it('ignores unknown body fields', async () => {
    const t = await h.tenant();
    const hook = await create(t, 'https://hooks.example.com/x', { secret: 'mine', id: 'mine', events: ['*'] });
    expect(hook.secret).not.toBe('mine');
    expect(hook.id).not.toBe('mine');
  });

  it('writes no membership event', async () => {
    const t = await h.tenant();
    await create(t, 'https://hooks.example.com/quiet');
    expect(await eventRows(h, t.projectId)).toStrictEqual([]);
  });

  it('keeps each project’s webhooks to itself', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    await create(t, 'https://hooks.example.com/mine');
    expect(await webhookRows(h, other.projectId)).toStrictEqual([]);
  });

  describe('with TENURE_WEBHOOK_ALLOW_PRIVATE=true', () => {
    let open: Harness;
    beforeAll(async () => {
      open = await createHarness({ env: { TENURE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    });
    afterAll(() => open.close());

    it('accepts plain http', async () => {
      const t = await open.tenant();
      const url = 'http://127.0.0.1:8080/hook';
      const path = pathFor(t);
      const res = await t.request({ method: 'POST', url: path, payload: { url } });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expectSuccess(res, { method: 'POST', path, message: 'Webhook created successfully', data: { url, id: data.id, secret: data.secret } });
      expect(data.secret).toMatch(HEX_SECRET);
    });
  });
});
