import type { Decision, LimitsConfig, PolicyName } from './rate-limiter.js';

/**
 * Rate-limit response headers (docs/rate-limits.md, "Headers") and the numbers of a 429 (docs/rate-limits.md, "Over a limit"). Pure functions of the
 * decisions and the current time, so the math is tested without a store or a clock.
 *
 * - `X-RateLimit-Limit/Remaining/Reset` describe the per-key window for authenticated requests and
 *   the per-IP window otherwise; Reset is a Unix time in seconds.
 * - `RateLimit-Policy` (IETF draft) lists every policy: `"key";q=100;w=60, "ip";q=300;w=60, "burst";q=20;w=1`;
 *   a platform callback's lists its own only: `"callback";q=6000;w=60`.
 * - `RateLimit` names the binding policy (fewest requests left): `"burst";r=4;t=1`, t in seconds.
 */

const ORDER: readonly PolicyName[] = ['key', 'ip', 'burst'];
const CALLBACK: readonly PolicyName[] = ['callback'];

export function policyHeader(config: LimitsConfig, names: readonly PolicyName[] = ORDER): string {
  return names.map((name) => `"${name}";q=${config.policies[name].limit};w=${config.policies[name].windowSec}`).join(', ');
}

/** Whole seconds to wait: rounded up so a client that waits that long is let through, never 0. */
export const secondsToWait = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** The decision with the fewest requests left; on a tie, the one that resets last. */
export function bindingDecision(decisions: readonly Decision[]): Decision | undefined {
  let best: Decision | undefined;
  for (const d of decisions) {
    if (!best || d.remaining < best.remaining || (d.remaining === best.remaining && d.msBeforeReset > best.msBeforeReset)) best = d;
  }
  return best;
}

export function rateLimitHeaders(
  decisions: readonly Decision[],
  config: LimitsConfig,
  nowMs: number,
): Record<string, string> {
  const headline = decisions.find((d) => d.policy === 'key') ?? decisions.find((d) => d.policy === 'ip');
  if (decisions.length === 0) return {}; // limits are off
  const names = decisions.some((d) => d.policy === 'callback') ? CALLBACK : ORDER;
  const headers: Record<string, string> = { 'ratelimit-policy': policyHeader(config, names) };
  if (headline) {
    headers['x-ratelimit-limit'] = String(headline.limit);
    headers['x-ratelimit-remaining'] = String(headline.remaining);
    headers['x-ratelimit-reset'] = String(Math.ceil((nowMs + headline.msBeforeReset) / 1000));
  }
  const binding = bindingDecision(decisions);
  if (binding) {
    headers['ratelimit'] = `"${binding.policy}";r=${binding.remaining};t=${Math.ceil(binding.msBeforeReset / 1000)}`;
  }
  return headers;
}

/** Of the refused decisions, the one whose window opens last: the client must wait for it. */
export function refusal(decisions: readonly Decision[]): Decision | undefined {
  let worst: Decision | undefined;
  for (const d of decisions) {
    if (!d.allowed && (!worst || d.msBeforeReset > worst.msBeforeReset)) worst = d;
  }
  return worst;
}
