import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';

/**
 * IPv6 clients are counted by their /64 (src/ratelimit/client-key.ts): one subscriber usually
 * holds a whole /64, and must not get a fresh IP budget, or a fresh start after a suspension, from
 * each of its 2^64 addresses. IPv4 clients stay per address, whichever stack they arrive on. Each
 * test speaks from addresses of its own, so counters never leak between tests.
 */

const LIMIT = 5;
const THRESHOLD = 3;
const h = useHarness({ env: { TENURE_RATE_LIMIT_IP: String(LIMIT), TENURE_SUSPENSION_THRESHOLD: String(THRESHOLD) } });

/** An unauthenticated request (a 404 that counts against the address) from `address`. */
const from = (address: string, o: { url?: string; headers?: Record<string, string> } = {}) =>
  h.app.inject({ method: 'GET', url: o.url ?? '/nowhere', remoteAddress: address, headers: o.headers });

describe('IPv6 clients by /64', () => {
  it('gives two addresses of one /64 one IP budget, and another /64 its own', async () => {
    const [a, b] = ['2001:db8:1:1::a', '2001:db8:1:1:ffff:ffff:ffff:b'];
    const statuses = [];
    for (const address of [a, a, a, b, b]) statuses.push((await from(address)).statusCode);
    expect(statuses).toStrictEqual(Array(LIMIT).fill(404));
    for (const address of [a, b, '2001:0DB8:0001:0001:0000:0000:0000:0001']) {
      const refused = await from(address);
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.json().error.code).toBe('RATE_LIMIT_EXCEEDED');
    }
    // The neighbouring /64 is another client.
    const neighbour = await from('2001:db8:1:2::a');
    expect(neighbour.statusCode, neighbour.body).toBe(404);
    expect(neighbour.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('counts an IPv4-mapped address as its IPv4 address, and IPv4 addresses one by one', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await from('198.51.100.9')).statusCode).toBe(404);
    expect((await from('::ffff:198.51.100.9')).statusCode).toBe(429);
    expect((await from('198.51.100.10')).statusCode).toBe(404);
  });

  it('suspends the whole /64: another of its addresses is refused even with a valid key, another /64 is not', async () => {
    const t = await h.tenant();
    const own = { url: `${t.base}/memberships?limit=1`, headers: t.headers };
    for (let i = 0; i < LIMIT; i++) await from('2001:db8:2:1::1');
    // The first refusal tells the wait; THRESHOLD more before it ends suspend.
    for (let i = 0; i <= THRESHOLD; i++) expect((await from('2001:db8:2:1::1')).json().error.code).toBe('RATE_LIMIT_EXCEEDED');
    const sibling = await from('2001:db8:2:1:abcd::2', own);
    expect(sibling.statusCode, sibling.body).toBe(429);
    expect(sibling.json().error.code).toBe('ACCESS_SUSPENDED');
    const elsewhere = await from('2001:db8:2:2::1', own);
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
  });
});
