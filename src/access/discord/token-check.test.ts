import { DiscordAPIError, HTTPError, RateLimitError } from '@discordjs/rest';
import { beforeAll, describe, expect, it } from 'vitest';
import { normalizeDiscordToken, verdictOf } from './token-check.js';
import { discordRest } from './discord-libraries.js';

// @discordjs/rest is loaded at first use (src/lazy-library.ts); these tests build its clients and errors directly.
beforeAll(() => discordRest.load());

const TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0MzI.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789_-AB';

describe('normalizeDiscordToken', () => {
  it.each([
    ['the token', TOKEN],
    ['the token with surrounding whitespace and a newline', `  ${TOKEN}\n`],
    ['the token as an Authorization header value (Bot prefix)', `Bot ${TOKEN}`],
    ['a lower-case prefix with extra spaces', `  bot   ${TOKEN} `],
  ])('takes %s', (_what, raw) => {
    expect(normalizeDiscordToken(raw)).toStrictEqual({ token: TOKEN });
  });

  it.each([
    ['the empty string', '', 'bot_token must not be empty: copy it from the Discord Developer Portal (your application, Bot, Reset Token)'],
    ['whitespace only', ' \n\t ', 'bot_token must not be empty: copy it from the Discord Developer Portal (your application, Bot, Reset Token)'],
    ['the prefix alone', 'Bot ', 'bot_token must not be empty: copy it from the Discord Developer Portal (your application, Bot, Reset Token)'],
    ['201 characters', 'a'.repeat(201), 'bot_token must be at most 200 characters'],
    ['a Bearer token', `Bearer ${TOKEN}`, 'bot_token must be the bot token alone: printable ASCII characters without spaces'],
    ['two tokens', `${TOKEN} ${TOKEN}`, 'bot_token must be the bot token alone: printable ASCII characters without spaces'],
    ['a newline inside (header injection)', `${TOKEN}\r\nX-Injected: 1`, 'bot_token must be the bot token alone: printable ASCII characters without spaces'],
    ['a non-ASCII character', `${TOKEN}é`, 'bot_token must be the bot token alone: printable ASCII characters without spaces'],
    ['a NUL character', `${TOKEN}\u0000`, 'bot_token must be the bot token alone: printable ASCII characters without spaces'],
  ])('refuses %s', (_what, raw, problem) => {
    expect(normalizeDiscordToken(raw)).toStrictEqual({ problem });
  });

  it('takes exactly 200 characters', () => {
    expect(normalizeDiscordToken('a'.repeat(200))).toStrictEqual({ token: 'a'.repeat(200) });
  });
});

describe('verdictOf', () => {
  const request = { body: undefined, files: undefined };
  const url = 'https://discord.com/api/v10/users/@me';

  it('calls a 401 a refused token (a client error), the only answer that is', () => {
    const err = new DiscordAPIError({ message: '401: Unauthorized', code: 0 }, 0, 401, 'GET', url, request);
    expect(verdictOf(err)).toStrictEqual({
      ok: false,
      refused: true,
      message: 'Discord refused bot_token (401 Unauthorized): copy the current token from the Discord Developer Portal (your application, Bot, Reset Token)',
    });
  });

  it.each([
    ['a 5xx', new HTTPError(502, 'Bad Gateway', 'GET', url, request), 'Discord answered the token check with HTTP 502. Nothing was stored; try again in a moment'],
    ['another 4xx', new DiscordAPIError({ message: 'Missing Access', code: 50001 }, 50001, 403, 'GET', url, request), 'Discord answered the token check with HTTP 403. Nothing was stored; try again in a moment'],
    ['a refused connection', new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }), 'Discord could not be asked to check the token (unreachable). Nothing was stored; try again in a moment'],
    ['a timeout', Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }), 'Discord could not be asked to check the token (timed out). Nothing was stored; try again in a moment'],
  ])('calls %s a platform that could not be asked', (_what, err, message) => {
    expect(verdictOf(err)).toStrictEqual({ ok: false, refused: false, message });
  });

  it('reports a rate limit with the seconds to wait, rounded up', () => {
    const err = new RateLimitError({
      timeToReset: 2_300,
      limit: 1,
      method: 'GET',
      hash: 'h',
      url,
      route: '/users/@me',
      majorParameter: 'global',
      global: false,
      retryAfter: 2_300,
      sublimitTimeout: 0,
      scope: 'user',
    });
    expect(verdictOf(err)).toStrictEqual({
      ok: false,
      refused: false,
      message: 'Discord is rate limiting the token check; nothing was stored; try again in a moment',
      retryAfterSeconds: 3,
    });
  });
});
