import type { REST } from '@discordjs/rest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HeldBot } from './bot-leases.js';
import { confirmationCalls, sendOnDiscord, sendOnTelegram, type HeldBots } from './confirmation-calls.js';
import { discordRest } from './discord/discord-libraries.js';
import { createDiscordRest } from './discord/rest.js';
import { grammy } from './telegram/api.js';
import { createTelegramClient, type TelegramClient } from './telegram/client.js';

// The libraries are loaded at first use (src/lazy-library.ts); these tests build its clients and errors directly.
beforeAll(() => Promise.all([discordRest.load(), grammy.load()]));

/**
 * What each platform answer means for a confirmation (src/access/confirmation-calls.ts), through
 * the real clients (`@discordjs/rest`, grammY) on a stubbed transport: the bot's held client, its
 * signal, and the outcomes the job records.
 */

const TOKEN = '123456:SECRET-token';

interface Answer {
  status: number;
  body: unknown;
}

/** A transport answering in turn, recording each URL; `hang` answers nothing until the request is aborted. */
function transport(answers: (Answer | 'hang' | Error)[]) {
  const urls: string[] = [];
  const fetch = (url: string | URL, init?: { signal?: AbortSignal | null }) => {
    urls.push(String(url));
    const a = answers.shift()!;
    if (a instanceof Error) return Promise.reject(a);
    if (a === 'hang') {
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')), { once: true });
      });
    }
    return Promise.resolve(new Response(JSON.stringify(a.body), { status: a.status, headers: { 'content-type': 'application/json' } }));
  };
  return { urls, fetch };
}

const discord = (answers: (Answer | 'hang' | Error)[]) => {
  const t = transport(answers);
  const rest = createDiscordRest(TOKEN, 'http://d/api', { retries: 0, rejectOnRateLimit: null, makeRequest: t.fetch as never });
  return { rest, urls: t.urls };
};
const telegram = (answers: (Answer | Error)[]) => {
  const t = transport(answers);
  return createTelegramClient(TOKEN, 'http://t', { perSecond: 1000, chatPerSecond: 1000 }, { fetch: t.fetch as never });
};
const tgError = (status: number, description: string, parameters?: object): Answer => ({ status, body: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) } });
const live = () => new AbortController().signal;

describe('confirmation calls through a held bot', () => {
  it('Discord: a DM channel, then the message; 50007 is unreachable, a 5xx is retried, another refusal fails', async () => {
    const ok = discord([{ status: 200, body: { id: '99', type: 1 } }, { status: 200, body: { id: '1' } }]);
    expect(await sendOnDiscord(ok.rest, '42', 'hi', live())).toStrictEqual({ kind: 'sent' });
    expect(ok.urls).toStrictEqual(['http://d/api/v10/users/@me/channels', 'http://d/api/v10/channels/99/messages']);
    const closed = discord([{ status: 200, body: { id: '99' } }, { status: 403, body: { code: 50007, message: 'Cannot send messages to this user' } }]);
    expect(await sendOnDiscord(closed.rest, '42', 'hi', live())).toStrictEqual({ kind: 'unreachable', reason: 'dm_closed', error: '403: 50007 Cannot send messages to this user' });
    expect(await sendOnDiscord(discord([{ status: 502, body: null }]).rest, '42', 'hi', live())).toMatchObject({ kind: 'retry' });
    expect(await sendOnDiscord(discord([{ status: 404, body: { code: 10013, message: 'Unknown User' } }]).rest, '42', 'hi', live())).toStrictEqual({
      kind: 'failed',
      error: '404: 10013 Unknown User',
    });
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(await sendOnDiscord(discord([refused]).rest, '42', 'hi', live())).toStrictEqual({ kind: 'retry', error: 'ECONNREFUSED' });
  });

  it('Discord: the bot let go while the message is out gives it back, not failed', async () => {
    const lease = new AbortController();
    const out = discord([{ status: 200, body: { id: '99' } }, 'hang']);
    const sending = sendOnDiscord(out.rest, '42', 'hi', lease.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    lease.abort();
    expect(await sending).toMatchObject({ kind: 'released' });
  });

  it('Telegram: blocked and never-started members are unreachable, 429 waits its retry_after, 5xx is retried; no answer names the token', async () => {
    const blocked = await sendOnTelegram(telegram([tgError(403, 'Forbidden: bot was blocked by the user')]), '42', 'hi', live());
    expect(blocked).toStrictEqual({ kind: 'unreachable', reason: 'bot_blocked', error: '403: Forbidden: bot was blocked by the user' });
    const never = await sendOnTelegram(telegram([tgError(403, "Forbidden: bot can't initiate conversation with a user")]), '42', 'hi', live());
    expect(never).toMatchObject({ kind: 'unreachable', reason: 'no_conversation' });
    const notFound = await sendOnTelegram(telegram([tgError(400, 'Bad Request: chat not found')]), '42', 'hi', live());
    expect(notFound).toMatchObject({ kind: 'unreachable', reason: 'no_conversation' });
    const limited = await sendOnTelegram(telegram([tgError(429, 'Too Many Requests: retry after 3', { retry_after: 3 })]), '42', 'hi', live());
    expect(limited).toMatchObject({ kind: 'retry', retryAfterMs: 3_000 });
    expect(await sendOnTelegram(telegram([tgError(502, 'Bad Gateway')]), '42', 'hi', live())).toMatchObject({ kind: 'retry' });
    expect(await sendOnTelegram(telegram([tgError(400, 'Bad Request: message text is empty')]), '42', 'hi', live())).toMatchObject({ kind: 'failed' });
    const down = Object.assign(new TypeError('request to http://t/bot123456:SECRET-token/sendMessage failed'), { code: 'ECONNREFUSED' });
    const refused = await sendOnTelegram(telegram([down]), '42', 'hi', live());
    expect(refused).toMatchObject({ kind: 'retry' });
    expect(JSON.stringify([blocked, never, limited, refused])).not.toContain('SECRET');
  });

  it('a message goes only through a bot this process holds; its owners are the workers’ lease ids', async () => {
    const held = telegram([{ status: 200, body: { ok: true, result: { message_id: 1, date: 0, chat: { id: 42, type: 'private' } } } }]);
    const bots: HeldBots<TelegramClient> = {
      id: 'tg-worker',
      withBot: (projectId, work) => (projectId === 'p1' ? work({ client: held, signal: live() } as HeldBot<TelegramClient>) : Promise.resolve(null)),
    };
    const discordBots: HeldBots<REST> = { id: 'discord-worker', withBot: () => Promise.resolve(null) };
    const channel = confirmationCalls({ discord: discordBots, telegram: bots });
    expect(channel.owners).toStrictEqual(['discord-worker', 'tg-worker']);
    expect(await channel.send({ platform: 'telegram', projectId: 'p1', userId: '42' }, 'hi', [])).toStrictEqual({ kind: 'sent' });
    expect(await channel.send({ platform: 'telegram', projectId: 'p2', userId: '42' }, 'hi', [])).toMatchObject({ kind: 'released' });
    expect(await channel.send({ platform: 'discord', projectId: 'p1', userId: '42' }, 'hi', [])).toMatchObject({ kind: 'released' });
    expect(confirmationCalls({ discord: null, telegram: bots }).owners).toStrictEqual(['tg-worker']);
  });
});
