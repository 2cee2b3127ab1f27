import { describe, expect, it } from 'vitest';
import { SourceAccessError, SourceUnavailableError } from '../domain/moving-in/source.js';
import { BotSubscriptionApi } from './botsubscription-api.js';

const KEY = 'bs_secret_key_abcdef';

/** A source answering `answer(n)` to the n-th request, on a manual clock that sleeping moves. */
function source(answer: (n: number) => { status: number; body?: unknown; headers?: Record<string, string> }, o: { retries?: number } = {}) {
  const clock = { t: 1_700_000_000_000 };
  const sent: { at: number; url: string; auth: string | null }[] = [];
  const fetch = (async (url: string, init?: RequestInit) => {
    sent.push({ at: clock.t, url, auth: new Headers(init?.headers).get('authorization') });
    const a = answer(sent.length);
    return new Response(JSON.stringify(a.body ?? { ok: true, total: 0, data: [] }), { status: a.status, headers: a.headers });
  }) as typeof globalThis.fetch;
  const api = new BotSubscriptionApi({
    baseUrl: 'https://source.test/',
    sourceProjectId: 'p1',
    apiKey: KEY,
    fetch,
    sleep: async (ms) => void (clock.t += ms),
    now: () => clock.t,
    ...o,
  });
  return { api, sent, clock };
}

const most = (times: number[], windowMs: number) => Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length));

describe('BotSubscriptionApi', () => {
  it('keeps under 100 requests a minute and 20 a second by itself', async () => {
    const { api, sent } = source(() => ({ status: 200 }));
    for (let i = 0; i < 250; i++) await api.page('memberships', i * 100);
    const times = sent.map((s) => s.at);
    expect(most(times, 60_000)).toBe(100);
    expect(most(times, 1_000)).toBe(20);
    expect(sent[0]!.url).toBe('https://source.test/v2/projects/p1/memberships?limit=100&offset=0');
    expect(sent[0]!.auth).toBe(`Bearer ${KEY}`);
  });

  it('waits out a 429 for its Retry-After, then sends the same request again', async () => {
    const { api, sent } = source((n) =>
      n === 1 ? { status: 429, headers: { 'retry-after': '7' }, body: { code: 429, error: { code: 'RATE_LIMIT_EXCEEDED', retry_after: 7 } } } : { status: 200, body: { ok: true, total: 1, data: [{ a: 1 }] } },
    );
    expect(await api.page('plans', 0)).toEqual({ items: [{ a: 1 }], total: 1 });
    expect(sent[1]!.at - sent[0]!.at).toBe(7_000);
    expect(sent[1]!.url).toBe(sent[0]!.url);
    expect(api.stats).toEqual({ requests: 2, rateLimited: 1 });
  });

  it('holds the next request until X-RateLimit-Reset once X-RateLimit-Remaining is 0', async () => {
    let reset = 0;
    const { api, sent, clock } = source(() => {
      reset = Math.ceil(clock.t / 1000) + 30;
      return { status: 200, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } };
    });
    await api.page('users', 0);
    const first = reset;
    await api.page('users', 100);
    expect(sent[1]!.at).toBeGreaterThanOrEqual(first * 1000);
  });

  it('refuses a 401 or 403 at once, with a message that never holds the key', async () => {
    const unauthorized = source(() => ({ status: 401, body: { ok: false, code: 401, error: { error_code: 'UNAUTHORIZED', message: 'Invalid API key' } } }));
    const err = await unauthorized.api.settings().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceAccessError);
    expect((err as Error).message).toMatch(/refused the API key \(401: Invalid API key\)/);
    expect((err as Error).message).not.toContain(KEY);
    expect(unauthorized.sent).toHaveLength(1);
    const forbidden = source(() => ({ status: 403 }));
    await expect(forbidden.api.settings()).rejects.toThrow(/may not read project p1 \(403\)/);
  });

  it('sends a request that failed with a 5xx again `retries` times, a doubling wait apart', async () => {
    const { api, sent } = source(() => ({ status: 503 }), { retries: 2 });
    await expect(api.page('targets', 0)).rejects.toThrow(SourceUnavailableError);
    expect(sent.map((s) => s.at - sent[0]!.at)).toEqual([0, 1_000, 3_000]);
  });
});
