import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an Authorization header carries the metrics token (TENURE_METRICS_TOKEN). Compared by
 * hashes of equal length, so the time taken says nothing about the token.
 */
export function carriesMetricsToken(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}
