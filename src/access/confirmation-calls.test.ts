import { describe, expect, it } from 'vitest';
import { confirmationCalls } from './confirmation-calls.js';

/** What each platform answer means for a confirmation (src/access/confirmation-calls.ts), on a stub fetch. */

const TOKEN = '123456:SECRET-token';

function channel(answers: { status: number; body: unknown; headers?: Record<string, string> }[]) {
  const urls: string[] = [];
  const stub = ((url: string) => {
    urls.push(url);
    const a = answers.shift()!;
    return Promise.resolve(new Response(JSON.stringify(a.body), { status: a.status, headers: a.headers ?? {} }));
  }) as unknown as typeof fetch;
  return { c: confirmationCalls({ discordApiUrl: 'http://d/api', telegramApiUrl: 'http://t', fetch: stub }), urls };
}

describe('confirmationCalls', () => {
  it('Discord: a DM channel, then the message; 50007 is unreachable, 429 waits its retry_after, 5xx is retried', async () => {
    const ok = channel([{ status: 200, body: { id: '99' } }, { status: 200, body: { id: '1' } }]);
    expect(await ok.c.send('discord', TOKEN, '42', 'hi')).toStrictEqual({ kind: 'sent' });
    expect(ok.urls).toStrictEqual(['http://d/api/v10/users/@me/channels', 'http://d/api/v10/channels/99/messages']);
    const closed = channel([{ status: 200, body: { id: '99' } }, { status: 403, body: { code: 50007, message: 'Cannot send messages to this user' } }]);
    expect(await closed.c.send('discord', TOKEN, '42', 'hi')).toStrictEqual({ kind: 'unreachable', reason: 'dm_closed', error: '403: 50007 Cannot send messages to this user' });
    const limited = channel([{ status: 429, body: { message: 'You are being rate limited.', retry_after: 2.5, global: false } }]);
    expect(await limited.c.send('discord', TOKEN, '42', 'hi')).toMatchObject({ kind: 'retry', retryAfterMs: 2_500 });
    expect(await channel([{ status: 502, body: null }]).c.send('discord', TOKEN, '42', 'hi')).toMatchObject({ kind: 'retry' });
    expect(await channel([{ status: 404, body: { code: 10013, message: 'Unknown User' } }]).c.send('discord', TOKEN, '42', 'hi')).toStrictEqual({
      kind: 'failed',
      error: '404: 10013 Unknown User',
    });
  });

  it('Telegram: blocked and never-started members are unreachable, 429 waits; no answer names the token', async () => {
    const blocked = await channel([{ status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } }]).c.send('telegram', TOKEN, '42', 'hi');
    expect(blocked).toStrictEqual({ kind: 'unreachable', reason: 'bot_blocked', error: '403: Forbidden: bot was blocked by the user' });
    const never = await channel([{ status: 403, body: { ok: false, error_code: 403, description: "Forbidden: bot can't initiate conversation with a user" } }]).c.send('telegram', TOKEN, '42', 'hi');
    expect(never).toMatchObject({ kind: 'unreachable', reason: 'no_conversation' });
    const limited = await channel([{ status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } } }]).c.send('telegram', TOKEN, '42', 'hi');
    expect(limited).toMatchObject({ kind: 'retry', retryAfterMs: 3_000 });
    const failing = confirmationCalls({ discordApiUrl: 'http://d', telegramApiUrl: 'http://127.0.0.1:1', fetch: (() => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }))) as unknown as typeof fetch });
    const refused = await failing.send('telegram', TOKEN, '42', 'hi');
    expect(refused).toStrictEqual({ kind: 'retry', error: 'ECONNREFUSED' });
    expect(JSON.stringify([blocked, never, limited, refused])).not.toContain('SECRET');
  });
});
