import { describe, expect, it } from 'vitest';
import { EMPTY_TOKEN, normalizeTelegramToken, NOT_A_TOKEN, verdictOf } from './token-check.js';

const TOKEN = '7204583149:AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0';

describe('normalizeTelegramToken', () => {
  it.each([
    ['the token', TOKEN],
    ['the token with surrounding whitespace and a newline', `  ${TOKEN}\n`],
    ['the token as it appears in a Bot API URL (bot prefix)', `bot${TOKEN}`],
    ['a one-digit id', '1:AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0'],
    ['a 20-digit id and a 100-character secret', `${'9'.repeat(20)}:${'a'.repeat(100)}`],
    ['a 30-character secret', `123:${'A'.repeat(30)}`],
  ])('takes %s', (_what, raw) => {
    expect(normalizeTelegramToken(raw)).toStrictEqual({ token: raw.trim().replace(/^bot/, '') });
  });

  it.each([
    ['the empty string', '', EMPTY_TOKEN],
    ['whitespace only', ' \n\t ', EMPTY_TOKEN],
    ['the secret alone', 'AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0', NOT_A_TOKEN],
    ['the id alone', '7204583149', NOT_A_TOKEN],
    ['a Discord token', 'MTA5ODc2NTQzMjEwOTg3NjU0MzI.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789_-AB', NOT_A_TOKEN],
    ['a secret of 29 characters', `123:${'A'.repeat(29)}`, NOT_A_TOKEN],
    ['a secret of 101 characters', `123:${'A'.repeat(101)}`, NOT_A_TOKEN],
    ['an id of 21 digits', `${'1'.repeat(21)}:${'A'.repeat(35)}`, NOT_A_TOKEN],
    ['a negative id', `-${TOKEN}`, NOT_A_TOKEN],
    ['a Bot prefix with a space', `Bot ${TOKEN}`, NOT_A_TOKEN],
    ['two tokens', `${TOKEN} ${TOKEN}`, NOT_A_TOKEN],
    ['a path after it', `${TOKEN}/getMe`, NOT_A_TOKEN],
    ['a line break inside (header injection)', `${TOKEN}\r\nX-Injected: 1`, NOT_A_TOKEN],
    ['a non-ASCII character', `${TOKEN}é`, NOT_A_TOKEN],
    ['a NUL character', `${TOKEN}\u0000`, NOT_A_TOKEN],
    ['a megabyte', `1:${'a'.repeat(1_000_000)}`, NOT_A_TOKEN],
  ])('refuses %s', (_what, raw, problem) => {
    expect(normalizeTelegramToken(raw)).toStrictEqual({ problem });
  });

  it('says where a token comes from', () => {
    expect(EMPTY_TOKEN).toBe('bot_token must not be empty: @BotFather gives it: send /token and choose the bot');
    expect(NOT_A_TOKEN).toBe("bot_token must be a Telegram bot token, the bot's id, a colon and its secret (123456789:AAH…); @BotFather gives it: send /token and choose the bot");
  });
});

describe('verdictOf', () => {
  it.each([
    ['401', { kind: 'unauthorized', code: '401', description: 'Unauthorized' } as const, '401 Unauthorized'],
    ['404 (a token Telegram cannot parse)', { kind: 'unauthorized', code: '404', description: 'Not Found' } as const, '404 Not Found'],
  ])('calls a %s a refused token (a client error)', (_what, failure, answer) => {
    expect(verdictOf(failure)).toStrictEqual({
      ok: false,
      refused: true,
      message: `Telegram refused bot_token (${answer}): copy the current token from @BotFather (send /token and choose the bot)`,
    });
  });

  it('reports a 429 with the seconds Telegram named, as not refused', () => {
    expect(verdictOf({ kind: 'rate_limited', code: '429', description: 'Too Many Requests: retry after 9', retryAfterSeconds: 9 })).toStrictEqual({
      ok: false,
      refused: false,
      message: 'Telegram is rate limiting the token check; nothing was stored; try again in a moment',
      retryAfterSeconds: 9,
    });
  });

  it.each([
    ['a 5xx', { kind: 'server', code: '502', description: 'Bad Gateway' } as const, 'Telegram answered the token check with 502 Bad Gateway'],
    ['an answer that was not JSON', { kind: 'server', code: 'invalid_response', description: 'x' } as const, "Telegram's answer to the token check could not be read (invalid_response)"],
    ['a 403', { kind: 'forbidden', code: '403', description: 'Forbidden' } as const, 'Telegram answered the token check with 403 Forbidden'],
    ['a 400', { kind: 'bad_request', code: '400', description: 'Bad Request' } as const, 'Telegram answered the token check with 400 Bad Request'],
    ['a refused connection', { kind: 'network', code: 'ECONNREFUSED', description: 'x' } as const, 'Telegram could not be asked to check the token (unreachable)'],
    ['a timeout', { kind: 'timeout', code: 'timeout', description: 'x' } as const, 'Telegram could not be asked to check the token (timed out)'],
  ])('calls %s a platform that could not be asked', (_what, failure, message) => {
    expect(verdictOf(failure)).toStrictEqual({ ok: false, refused: false, message: `${message}. Nothing was stored; try again in a moment` });
  });
});
