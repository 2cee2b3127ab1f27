import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/**
 * Discord signs every interaction it POSTs to an Interactions Endpoint URL: Ed25519 over the
 * `X-Signature-Timestamp` header followed by the raw body, with the application's key (its
 * `verify_key`, hex). Discord removes an endpoint that accepts a bad signature, so nothing of the
 * body is read before this says yes. Node's own crypto does the check: no extra dependency.
 */

/** How old a signed timestamp may be: a captured request replayed later is refused. */
export const MAX_SIGNATURE_AGE_MS = 5 * 60_000;

/** The SPKI DER prefix of an Ed25519 public key (RFC 8410): the 32 key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const HEX_KEY = /^[0-9a-f]{64}$/i;
const HEX_SIGNATURE = /^[0-9a-f]{128}$/i;
const TIMESTAMP = /^\d{1,12}$/;

export type SignatureVerdict = 'ok' | 'missing' | 'bad' | 'stale';

/** The application's verify_key as a key object; null when it is not 32 bytes of hex. */
export function ed25519Key(verifyKeyHex: string): KeyObject | null {
  if (!HEX_KEY.test(verifyKeyHex)) return null;
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(verifyKeyHex, 'hex')]), format: 'der', type: 'spki' });
}

/**
 * Whether `rawBody` came from Discord: the signature verifies over timestamp + body, and the
 * timestamp (Unix seconds) is within MAX_SIGNATURE_AGE_MS of `now`, either way (clocks drift).
 */
export function checkSignature(
  verifyKeyHex: string,
  signature: string | undefined,
  timestamp: string | undefined,
  rawBody: string,
  now: Date,
): SignatureVerdict {
  if (!signature || !timestamp) return 'missing';
  if (!HEX_SIGNATURE.test(signature) || !TIMESTAMP.test(timestamp)) return 'bad';
  const key = ed25519Key(verifyKeyHex);
  if (!key) return 'bad';
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), Buffer.from(rawBody, 'utf8')]);
  if (!verify(null, signed, key, Buffer.from(signature, 'hex'))) return 'bad';
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > MAX_SIGNATURE_AGE_MS) return 'stale';
  return 'ok';
}
