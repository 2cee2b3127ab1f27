import { randomBytes } from 'node:crypto';
export { digestOf } from '../front-desk/link-tokens.js';

/**
 * The dashboard's secrets (docs/dashboard.md, "Sessions"): a session's cookie value and a sign-in
 * link's token are 256 random bits in base64url (43 characters); the tables keep only their
 * SHA-256 digest (`digestOf`).
 */

const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function newDashboardToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `s` can be a token the dashboard made: anything else is refused without a database read. */
export function isDashboardToken(s: string | undefined): s is string {
  return s !== undefined && SHAPE.test(s);
}
