import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkSignature, ed25519Key } from './discord-signature.js';

const pair = generateKeyPairSync('ed25519');
const der = pair.publicKey.export({ format: 'der', type: 'spki' });
const verifyKey = der.subarray(der.length - 32).toString('hex');
const now = new Date('2026-01-12T10:00:00.000Z');
const seconds = String(now.getTime() / 1000);
const body = '{"type":1}';
const signed = (timestamp: string, raw: string) => sign(null, Buffer.from(timestamp + raw), pair.privateKey).toString('hex');

describe('checkSignature', () => {
  it('takes Discord’s signature over timestamp + raw body', () => {
    expect(checkSignature(verifyKey, signed(seconds, body), seconds, body, now)).toBe('ok');
    expect(checkSignature(verifyKey.toUpperCase(), signed(seconds, body), seconds, body, now)).toBe('ok');
  });

  it('refuses a missing header, a changed body or timestamp, another key, and malformed values', () => {
    const signature = signed(seconds, body);
    expect(checkSignature(verifyKey, undefined, seconds, body, now)).toBe('missing');
    expect(checkSignature(verifyKey, signature, undefined, body, now)).toBe('missing');
    expect(checkSignature(verifyKey, signature, seconds, '{"type":2}', now)).toBe('bad');
    expect(checkSignature(verifyKey, signature, String(Number(seconds) + 1), body, now)).toBe('bad');
    const other = generateKeyPairSync('ed25519');
    expect(checkSignature(verifyKey, sign(null, Buffer.from(seconds + body), other.privateKey).toString('hex'), seconds, body, now)).toBe('bad');
    expect(checkSignature(verifyKey, 'zz', seconds, body, now)).toBe('bad');
    expect(checkSignature(verifyKey, signature, '12.5', body, now)).toBe('bad');
    expect(checkSignature('not-a-key', signature, seconds, body, now)).toBe('bad');
  });

  it('refuses a timestamp more than 5 minutes away, either way', () => {
    for (const offset of [-301, 301]) {
      const ts = String(Number(seconds) + offset);
      expect(checkSignature(verifyKey, signed(ts, body), ts, body, now)).toBe('stale');
    }
    const edge = String(Number(seconds) - 300);
    expect(checkSignature(verifyKey, signed(edge, body), edge, body, now)).toBe('ok');
  });

  it('reads only a 32-byte hex key', () => {
    expect(ed25519Key(verifyKey)).not.toBeNull();
    expect(ed25519Key(verifyKey.slice(2))).toBeNull();
  });
});
