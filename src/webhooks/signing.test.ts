import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { productSignature, signatureHeaders, standardSignature, standardWebhooksSecret } from './signing.js';

const SECRET = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const OLD_SECRET = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
const EVENT_ID = '2b9d0c1e-4f53-4bb4-9d5e-6c3fd0a4c7a1';
const T = 1767225600;
const BODY =
  '{"event_id":"2b9d0c1e-4f53-4bb4-9d5e-6c3fd0a4c7a1","type":"webhook.test","project_id":"7c1f6a7e-2d1b-4a59-8a55-3a7c9a6b8e10","emitted_at":1767225600000,"data":{"message": "hello"}}';

/** A receiver of the product's scheme, written from its documentation with node's crypto. */
function verifyProduct(header: string, body: string, secret: string, nowSeconds: number): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  return parts
    .filter(([k]) => k === 'v1')
    .some(([, v]) => v !== undefined && v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}

describe('webhook signing', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('matches fixed vectors (computed independently with openssl dgst -hmac)', () => {
    expect(productSignature(SECRET, T, BODY)).toBe('d215c046b83fe4f54794312c067c1395b84aae8e8bcc2fb195e702d0d2753828');
    expect(standardSignature(SECRET, EVENT_ID, T, BODY)).toBe('NzGWhhX88g+ynHaE/wUAaGzKmfTj9a3J5KeGpLOyW44=');
    expect(standardWebhooksSecret(SECRET)).toBe(`whsec_${Buffer.from(SECRET, 'hex').toString('base64')}`);
  });

  it('builds X-Webhook-Signature as v1=<hex>,t=<unix seconds> and the Standard Webhooks headers', () => {
    expect(signatureHeaders({ eventId: EVENT_ID, timestamp: T, body: BODY, secrets: [SECRET] })).toStrictEqual({
      'x-webhook-signature': `v1=d215c046b83fe4f54794312c067c1395b84aae8e8bcc2fb195e702d0d2753828,t=${T}`,
      'webhook-id': EVENT_ID,
      'webhook-timestamp': String(T),
      'webhook-signature': 'v1,NzGWhhX88g+ynHaE/wUAaGzKmfTj9a3J5KeGpLOyW44=',
    });
  });

  it('verifies with node crypto as the product documents it (secret as ASCII, "<t>.<body>")', () => {
    const headers = signatureHeaders({ eventId: EVENT_ID, timestamp: T, body: BODY, secrets: [SECRET] });
    expect(verifyProduct(headers['x-webhook-signature']!, BODY, SECRET, T + 10)).toBe(true);
    expect(verifyProduct(headers['x-webhook-signature']!, BODY + ' ', SECRET, T + 10)).toBe(false);
    expect(verifyProduct(headers['x-webhook-signature']!, BODY, OLD_SECRET, T + 10)).toBe(false);
    expect(verifyProduct(headers['x-webhook-signature']!, BODY, SECRET, T + 301)).toBe(false);
  });

  it('verifies with the standardwebhooks package and the whsec_ secret', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T * 1000 + 5_000);
    const headers = signatureHeaders({ eventId: EVENT_ID, timestamp: T, body: BODY, secrets: [SECRET] });
    const wh = new Webhook(standardWebhooksSecret(SECRET));
    expect(wh.verify(BODY, headers)).toStrictEqual(JSON.parse(BODY));
    expect(wh.sign(EVENT_ID, new Date(T * 1000), BODY)).toBe(headers['webhook-signature']);
    expect(() => wh.verify(BODY.replace('hello', 'hellO'), headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(standardWebhooksSecret(OLD_SECRET)).verify(BODY, headers)).toThrow(/No matching signature/);
  });

  it('signs with both secrets during a rotation, newest first, in both headers', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T * 1000);
    const headers = signatureHeaders({ eventId: EVENT_ID, timestamp: T, body: BODY, secrets: [SECRET, OLD_SECRET] });
    expect(headers['x-webhook-signature']).toBe(
      `v1=${productSignature(SECRET, T, BODY)},v1=${productSignature(OLD_SECRET, T, BODY)},t=${T}`,
    );
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [SECRET, OLD_SECRET]) {
      expect(verifyProduct(headers['x-webhook-signature']!, BODY, secret, T)).toBe(true);
      expect(new Webhook(standardWebhooksSecret(secret)).verify(BODY, headers)).toStrictEqual(JSON.parse(BODY));
    }
  });

  it('signs bytes, not characters: non-ASCII bodies verify on both schemes', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T * 1000);
    const body = '{"data":{"name":"Zoë 🚀"}}';
    const headers = signatureHeaders({ eventId: EVENT_ID, timestamp: T, body, secrets: [SECRET] });
    expect(verifyProduct(headers['x-webhook-signature']!, body, SECRET, T)).toBe(true);
    expect(new Webhook(standardWebhooksSecret(SECRET)).verify(body, headers)).toStrictEqual(JSON.parse(body));
  });

  it('refuses to sign without a secret', () => {
    expect(() => signatureHeaders({ eventId: EVENT_ID, timestamp: T, body: BODY, secrets: [] })).toThrow();
  });
});
