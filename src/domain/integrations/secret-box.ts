import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Seals third-party secrets (bot tokens) at rest with the instance's encryption key
 * (docs/access.md, "Connecting a bot"): AES-256-GCM, a random 12-byte IV per secret, the 16-byte
 * authentication tag, as text: `v1.<key id>.<iv>.<tag>.<ciphertext>`, each part base64url.
 *
 * The key id is a fingerprint of the key, not the key: a secret sealed under another key is
 * named as such instead of failing as "tampered", and a later rotation can keep old keys to open
 * what they sealed while the new one seals. The version and key id are authenticated too (the
 * GCM additional data), so neither can be altered without the open failing.
 */

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** A sealed secret that cannot be opened: malformed, altered, or sealed under another key. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * The key as TENURE_ENCRYPTION_KEY (or the key file) gives it: 32 bytes as 64 hex characters, or
 * as base64 (standard or URL-safe alphabet, padding optional). Null for anything else: strict,
 * since Buffer's own decoders skip characters they do not know and would accept a typo.
 */
export function parseEncryptionKey(raw: string): Buffer | null {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/]{43}=?$/.test(text) && !/^[A-Za-z0-9_-]{43}=?$/.test(text)) return null;
  const key = Buffer.from(text.replace(/=$/, ''), text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
  return key.length === KEY_BYTES ? key : null;
}

/** The public fingerprint of a key: 8 base64url characters of a SHA-256 over it. */
function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('tenure secret box key id\0').update(key).digest('base64url').slice(0, 8);
}

function decodePart(part: string, name: string, bytes?: number): Buffer {
  const decoded = BASE64URL.test(part) ? Buffer.from(part, 'base64url') : null;
  if (!decoded || (bytes !== undefined && decoded.length !== bytes)) throw new SecretBoxError(`not a sealed secret: bad ${name}`);
  return decoded;
}

export class SecretBox {
  /** The fingerprint written into every secret this box seals. */
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`a secret box key is ${KEY_BYTES} bytes, not ${key.length}`);
    this.keyId = keyIdOf(key);
  }

  /** A fresh key, for storage that lives no longer than the process (an in-memory database). */
  static ephemeral(): SecretBox {
    return new SecretBox(randomBytes(KEY_BYTES));
  }

  /**
   * A key of its own for one `purpose` (HMAC-SHA256 of the purpose under the instance key), for
   * secrets tenure derives rather than stores (the Telegram webhook's secret token): the same on
   * every process sharing the key, and no use for opening what the box sealed.
   */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.key).update('tenure derived key\0').update(purpose).digest();
  }

  seal(plaintext: string): string {
    const header = `${VERSION}.${this.keyId}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(header));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [header, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** The plaintext of `sealed`; throws SecretBoxError when it is malformed, altered or under another key. */
  open(sealed: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretBoxError(`not a sealed secret of version ${VERSION}`);
    const [version, keyId, ivText, tagText, ciphertextText] = parts as [string, string, string, string, string];
    if (keyId !== this.keyId) {
      throw new SecretBoxError(`sealed under another encryption key (id ${keyId}); this instance's key has id ${this.keyId}`);
    }
    const iv = decodePart(ivText, 'iv', IV_BYTES);
    const tag = decodePart(tagText, 'tag', TAG_BYTES);
    const ciphertext = decodePart(ciphertextText, 'ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(`${version}.${keyId}`));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('the sealed secret does not authenticate: it was altered');
    }
  }
}

/**
 * What `sealed` holds, or null when this instance cannot open it (no key, or another key's seal):
 * for callers that answer "not available" then, rather than fail.
 */
export function openOrNull(box: SecretBox | null, sealed: string): string | null {
  if (!box) return null;
  try {
    return box.open(sealed);
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    return null;
  }
}
