import { createHash, randomBytes } from 'node:crypto';

/**
 * The secrets in the front desk's links (docs/front-desk.md): 24 random bytes in base64url, 192
 * bits in 32 characters of `A-Za-z0-9_-`, so a pay link's id also fits a Telegram `/start`
 * payload (at most 64 such characters). Only their SHA-256 digest is stored: the table alone opens
 * no page.
 */

const TOKEN_BYTES = 24;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;

export function newLinkToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Whether `s` can be a token tenure made: anything else is unknown without a database read. */
export function isLinkToken(s: string): boolean {
  return TOKEN_SHAPE.test(s);
}

/** What the tables keep of a token. */
export function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
