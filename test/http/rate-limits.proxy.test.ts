import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useHarness } from '../support/harness.js';

/**
 * Rate limits and suspensions behind a proxy (TRUST_PROXY=true: one trusted hop, the load
 * balancer at 10.0.0.1, which appends the address it saw to X-Forwarded-For). Whatever a client
 * writes into the header itself, it is the address the proxy saw: a forged address gets no fresh
 * budget, and cannot get someone else's address suspended.
 */

const h = useHarness({ env: { TRUST_PROXY: 'true', TENURE_RATE_LIMIT_IP: '20', TENURE_SUSPENSION_THRESHOLD: '10' } });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
});
afterEach(() => {
  vi.useRealTimers();
});

const PROXY = '10.0.0.1';

/** A request through the proxy from `client`, which wrote `forged` into X-Forwarded-For itself. */
const through = (client: string, forged: string | null, o: { url?: string; headers?: Record<string, string> } = {}) =>
  h.app.inject({
    method: 'GET',
    url: o.url ?? '/nowhere',
    remoteAddress: PROXY,
    headers: { 'x-forwarded-for': forged === null ? client : `${forged}, ${client}`, ...o.headers },
  });

describe('behind a trusted proxy', () => {
  it('gives a client one address budget whatever it forges in X-Forwarded-For', async () => {
    const attacker = '198.51.100.7';
    for (let i = 0; i < 20; i++) {
      const res = await through(attacker, `203.0.113.${i}`);
      expect(res.statusCode).toBe(404);
      vi.advanceTimersByTime(100);
    }
    const refused = await through(attacker, '203.0.113.99');
    expect(refused.statusCode, refused.body).toBe(429);
    // Another client through the same proxy has its own budget.
    expect((await through('198.51.100.8', null)).statusCode).toBe(404);
  });

  it('never suspends the address a client forged: its owner’s valid key still works', async () => {
    const t = await h.tenant();
    const victim = '9.9.9.9';
    for (let i = 0; i < 35; i++) {
      await through('198.51.100.20', victim);
      vi.advanceTimersByTime(1000);
    }
    const own = await through(victim, null, { url: `${t.base}/memberships?limit=1`, headers: t.headers });
    expect(own.statusCode, own.body).toBe(200);
  });
});
