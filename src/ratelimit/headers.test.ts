import { describe, expect, it } from 'vitest';
import { bindingDecision, policyHeader, rateLimitHeaders, refusal, secondsToWait } from './headers.js';
import type { Decision, LimitsConfig } from './rate-limiter.js';

const config: LimitsConfig = {
  policies: { key: { limit: 100, windowSec: 60 }, ip: { limit: 300, windowSec: 60 }, burst: { limit: 20, windowSec: 1 }, callback: { limit: 6000, windowSec: 60 } },
  suspension: null,
};

const d = (policy: Decision['policy'], remaining: number, msBeforeReset: number, allowed = true): Decision => ({
  policy,
  subject: policy === 'ip' ? 'ip:1.2.3.4' : 'key:k',
  limit: config.policies[policy].limit,
  windowSec: config.policies[policy].windowSec,
  remaining,
  msBeforeReset,
  allowed,
});

describe('rate-limit headers', () => {
  it('lists every policy in RateLimit-Policy', () => {
    expect(policyHeader(config)).toBe('"key";q=100;w=60, "ip";q=300;w=60, "burst";q=20;w=1');
  });

  it('describes the key window for an authenticated request', () => {
    const h = rateLimitHeaders([d('ip', 250, 30_000), d('key', 42, 17_400), d('burst', 19, 900)], config, 1_700_000_000_000);
    expect(h['x-ratelimit-limit']).toBe('100');
    expect(h['x-ratelimit-remaining']).toBe('42');
    expect(h['x-ratelimit-reset']).toBe(String(Math.ceil((1_700_000_000_000 + 17_400) / 1000)));
    expect(h['ratelimit']).toBe('"burst";r=19;t=1');
  });

  it('describes the IP window without a key', () => {
    const h = rateLimitHeaders([d('ip', 3, 5_000), d('burst', 10, 200)], config, 0);
    expect(h['x-ratelimit-limit']).toBe('300');
    expect(h['x-ratelimit-remaining']).toBe('3');
    expect(h['x-ratelimit-reset']).toBe('5');
    expect(h['ratelimit']).toBe('"ip";r=3;t=5');
  });

  it("a platform callback's headers name its own policy only", () => {
    const h = rateLimitHeaders([d('callback', 5_990, 42_000)], config, 0);
    expect(h['ratelimit-policy']).toBe('"callback";q=6000;w=60');
    expect(h['ratelimit']).toBe('"callback";r=5990;t=42');
    expect(h['x-ratelimit-limit']).toBeUndefined();
  });

  it('picks the binding policy by fewest left, then latest reset', () => {
    expect(bindingDecision([d('key', 5, 10_000), d('burst', 5, 500)])?.policy).toBe('key');
    expect(bindingDecision([d('key', 6, 10_000), d('burst', 5, 500)])?.policy).toBe('burst');
    expect(bindingDecision([])).toBeUndefined();
  });

  it('waits for the refused window that opens last', () => {
    const r = refusal([d('ip', 0, 40_000, false), d('key', 0, 20_000, false), d('burst', 3, 100)]);
    expect(r?.policy).toBe('ip');
    expect(refusal([d('key', 1, 1_000)])).toBeUndefined();
  });

  it.each([
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [59_001, 60],
    [0, 1],
    [-5, 1],
  ])('turns %i ms into %i whole seconds to wait, never 0', (ms, s) => {
    expect(secondsToWait(ms)).toBe(s);
  });
});
