import { timingSafeEqual } from 'node:crypto';

/**
 * Whether two strings are the same, compared in constant time: for a secret the caller holds
 * against one presented to it (a state cookie, a MAC, a webhook token), so the time taken tells
 * nothing of how much of it matched. Lengths differing answer at once: a length is no secret.
 */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
