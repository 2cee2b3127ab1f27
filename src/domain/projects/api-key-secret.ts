import { hash, randomBytes } from 'node:crypto';
import baseX from 'base-x';

/** API key secrets: `tk_live_` + 32 random bytes in base62 (docs/api-keys-settings-users.md, "API keys"). */

const base62 = baseX('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
const PREFIX = 'tk_live_';
// 32 bytes are 42 or 43 base62 digits (fewer only with leading zero bytes, about 1 in 2^16).
const SECRET_SHAPE = /^tk_live_[0-9A-Za-z]{40,44}$/;

export function generateKeySecret(): string {
  return PREFIX + base62.encode(randomBytes(32));
}

/** Cheap shape check, so a malformed token is refused without a database lookup. */
export const looksLikeKeySecret = (token: string): boolean => SECRET_SHAPE.test(token);

/**
 * Keys are looked up by SHA-256: a fast hash is right for 256-bit random secrets (no guessing).
 * Every request hashes its key: the one-shot `hash` skips the Hash object `createHash` builds.
 */
export const hashKeySecret = (secret: string): string => hash('sha256', secret, 'hex');
