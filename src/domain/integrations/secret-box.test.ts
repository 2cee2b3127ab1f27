import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseEncryptionKey, SecretBox, SecretBoxError } from './secret-box.js';

const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.GAbCdE.s3cr3t-t0k3n_with-all-sorts_0f-characters';

/** `sealed` with part `index` (0 version, 1 key id, 2 iv, 3 tag, 4 ciphertext) changed by `change`. */
function alter(sealed: string, index: number, change: (part: string) => string): string {
  const parts = sealed.split('.');
  parts[index] = change(parts[index]!);
  return parts.join('.');
}

/** Flips the lowest bit of the first byte of a base64url part. */
const flipFirstByte = (part: string): string => {
  const bytes = Buffer.from(part, 'base64url');
  bytes[0] = bytes[0]! ^ 1;
  return bytes.toString('base64url');
};

describe('SecretBox', () => {
  it('opens what it sealed, for any text (empty, unicode, long)', () => {
    const box = new SecretBox(KEY);
    for (const plaintext of [TOKEN, '', 'ünïcødé ✓ 🔑', 'x'.repeat(10_000)]) {
      expect(box.open(box.seal(plaintext))).toBe(plaintext);
    }
  });

  it('writes v1.<key id>.<iv>.<tag>.<ciphertext> in base64url, with a 12-byte IV and a 16-byte tag, never the plaintext', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal(TOKEN);
    const [version, keyId, iv, tag, ciphertext, ...rest] = sealed.split('.');
    expect(rest).toStrictEqual([]);
    expect(version).toBe('v1');
    expect(keyId).toBe(box.keyId);
    expect(keyId).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(ciphertext!, 'base64url')).toHaveLength(Buffer.byteLength(TOKEN));
    expect(sealed).toMatch(/^[A-Za-z0-9_.-]+$/);
    expect(sealed).not.toContain(TOKEN);
    expect(sealed).not.toContain(Buffer.from(TOKEN).toString('base64url'));
  });

  it('uses a fresh IV each time: one plaintext seals differently every time', () => {
    const box = new SecretBox(KEY);
    const sealed = new Set(Array.from({ length: 50 }, () => box.seal(TOKEN)));
    expect(sealed.size).toBe(50);
    expect(new Set([...sealed].map((s) => s.split('.')[2])).size).toBe(50);
  });

  it('names its key by a fingerprint that is stable for a key, differs between keys, and reveals no key bytes', () => {
    const other = randomBytes(32);
    expect(new SecretBox(KEY).keyId).toBe(new SecretBox(Buffer.from(KEY)).keyId);
    expect(new SecretBox(other).keyId).not.toBe(new SecretBox(KEY).keyId);
    expect(KEY.toString('base64url')).not.toContain(new SecretBox(KEY).keyId);
  });

  it.each([
    ['the ciphertext', 4],
    ['the tag', 3],
    ['the IV', 2],
  ])('refuses a secret whose %s was altered', (_what, index) => {
    const box = new SecretBox(KEY);
    const tampered = alter(box.seal(TOKEN), index, flipFirstByte);
    expect(() => box.open(tampered)).toThrow(new SecretBoxError('the sealed secret does not authenticate: it was altered'));
  });

  it('refuses a ciphertext cut short or lengthened', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal(TOKEN);
    const shorter = alter(sealed, 4, (p) => Buffer.from(p, 'base64url').subarray(1).toString('base64url'));
    const longer = alter(sealed, 4, (p) => Buffer.concat([Buffer.from(p, 'base64url'), Buffer.from([0])]).toString('base64url'));
    expect(() => box.open(shorter)).toThrow(SecretBoxError);
    expect(() => box.open(longer)).toThrow(SecretBoxError);
  });

  it('refuses a secret sealed under another key, naming both key ids', () => {
    const sealed = new SecretBox(randomBytes(32)).seal(TOKEN);
    const box = new SecretBox(KEY);
    expect(() => box.open(sealed)).toThrow(/sealed under another encryption key \(id [\w-]{8}\); this instance's key has id/);
  });

  it('refuses a secret whose key id was rewritten to this box’s (the header is authenticated)', () => {
    const sealed = new SecretBox(randomBytes(32)).seal(TOKEN);
    const box = new SecretBox(KEY);
    const relabelled = alter(sealed, 1, () => box.keyId);
    expect(() => box.open(relabelled)).toThrow(new SecretBoxError('the sealed secret does not authenticate: it was altered'));
  });

  it.each([
    ['plaintext', TOKEN],
    ['an empty string', ''],
    ['another version', (s: string) => alter(s, 0, () => 'v2')],
    ['a part missing', (s: string) => s.split('.').slice(0, 4).join('.')],
    ['a part too many', (s: string) => `${s}.AAAA`],
    ['an IV of 16 bytes', (s: string) => alter(s, 2, () => randomBytes(16).toString('base64url'))],
    ['a tag of 12 bytes', (s: string) => alter(s, 3, () => randomBytes(12).toString('base64url'))],
    ['standard base64 characters in the ciphertext', (s: string) => alter(s, 4, (p) => `${p}+/`)],
  ])('refuses %s as a sealed secret', (_what, make) => {
    const box = new SecretBox(KEY);
    const text = typeof make === 'string' ? make : make(box.seal(TOKEN));
    expect(() => box.open(text)).toThrow(SecretBoxError);
  });

  it('takes only 32-byte keys', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow('a secret box key is 32 bytes, not 16');
    expect(() => new SecretBox(randomBytes(33))).toThrow('a secret box key is 32 bytes, not 33');
  });

  it('makes a different key each time for ephemeral boxes', () => {
    const [a, b] = [SecretBox.ephemeral(), SecretBox.ephemeral()];
    expect(a.keyId).not.toBe(b.keyId);
    expect(() => b.open(a.seal(TOKEN))).toThrow(SecretBoxError);
  });
});

describe('parseEncryptionKey', () => {
  const bytes = randomBytes(32);

  it.each([
    ['64 lower-case hex characters', bytes.toString('hex')],
    ['64 upper-case hex characters', bytes.toString('hex').toUpperCase()],
    ['base64 with its padding', bytes.toString('base64')],
    ['base64 without padding', bytes.toString('base64').replace(/=$/, '')],
    ['base64url', bytes.toString('base64url')],
    ['a value with surrounding whitespace and a newline (a file written by echo)', `  ${bytes.toString('base64')}\n`],
  ])('reads %s', (_what, text) => {
    expect(parseEncryptionKey(text)).toStrictEqual(bytes);
  });

  it('reads the example keys of docs/access.md as the bytes they name', () => {
    expect(parseEncryptionKey('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f')).toStrictEqual(KEY);
    expect(parseEncryptionKey('AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=')).toStrictEqual(KEY);
  });

  it.each([
    ['the empty string', ''],
    ['a passphrase', 'correct horse battery staple'],
    ['62 hex characters (31 bytes)', randomBytes(31).toString('hex')],
    ['66 hex characters (33 bytes)', randomBytes(33).toString('hex')],
    ['base64 of 31 bytes', randomBytes(31).toString('base64')],
    ['base64 of 33 bytes', randomBytes(33).toString('base64')],
    ['base64 of 64 bytes', randomBytes(64).toString('base64')],
    ['base64 with a character outside the alphabet', `${bytes.toString('base64').slice(0, 42)}!=`],
    ['base64 mixing both alphabets', `+${bytes.toString('base64url').slice(1, 42)}_`],
    ['base64 with inner whitespace', `${bytes.toString('base64').slice(0, 20)} ${bytes.toString('base64').slice(20)}`],
    ['hex with a non-hex character', `${bytes.toString('hex').slice(0, 63)}g`],
    ['two padding characters', `${bytes.toString('base64').slice(0, 42)}==`],
  ])('refuses %s', (_what, text) => {
    expect(parseEncryptionKey(text)).toBeNull();
  });
});
