import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GrammyError, HttpError } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTelegramApi, grammy, telegramFailure } from './api.js';

// grammY is loaded at first use (src/lazy-library.ts); these tests build its clients and errors directly.
beforeAll(() => grammy.load());

const TOKEN = '7204583149:AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0';

const apiError = (error_code: number, description: string, parameters?: object) =>
  new GrammyError("Call to 'getMe' failed!", { ok: false, error_code, description, ...(parameters ? { parameters } : {}) }, 'getMe', {});

describe('telegramFailure: what the Bot API answered', () => {
  it.each([
    [401, 'Unauthorized', 'unauthorized'],
    [404, 'Not Found', 'unauthorized'],
    [403, 'Forbidden: bot was kicked from the supergroup chat', 'forbidden'],
    [400, 'Bad Request: chat not found', 'bad_request'],
    [409, 'Conflict: terminated by other getUpdates request', 'bad_request'],
    [500, 'Internal Server Error', 'server'],
    [502, 'Bad Gateway', 'server'],
  ])('%i %s is %s, with Telegram\'s code and description', (code, description, kind) => {
    expect(telegramFailure(apiError(code, description))).toStrictEqual({ kind, code: String(code), description });
  });

  it('a 429 carries retry_after in whole seconds', () => {
    expect(telegramFailure(apiError(429, 'Too Many Requests: retry after 7', { retry_after: 7 }))).toStrictEqual({
      kind: 'rate_limited',
      code: '429',
      description: 'Too Many Requests: retry after 7',
      retryAfterSeconds: 7,
    });
  });

  it('a 429 without retry_after (a proxy in front of Telegram) waits 5 s', () => {
    expect(telegramFailure(apiError(429, 'Too Many Requests'))).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 5 });
  });

  it('a group that became a supergroup names the new chat id', () => {
    const err = apiError(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: -1001234567890 });
    expect(telegramFailure(err)).toStrictEqual({
      kind: 'bad_request',
      code: '400',
      description: 'Bad Request: group chat was upgraded to a supergroup chat',
      migrateToChatId: -1001234567890,
    });
  });
});

describe('telegramFailure: no answer', () => {
  const url = `https://api.telegram.org/bot${TOKEN}/getMe`;

  it.each([
    [
      'a refused connection',
      Object.assign(new Error(`request to ${url} failed, reason: connect ECONNREFUSED`), { type: 'system', code: 'ECONNREFUSED' }),
      { kind: 'network', code: 'ECONNREFUSED', description: 'Telegram could not be reached (ECONNREFUSED)' },
    ],
    [
      "grammY's timeout",
      new Error("Request to 'getMe' timed out after 5 seconds"),
      { kind: 'timeout', code: 'timeout', description: 'Telegram did not answer in time' },
    ],
    [
      'an aborted call',
      Object.assign(new Error('The user aborted a request.'), { name: 'AbortError', type: 'aborted' }),
      { kind: 'timeout', code: 'timeout', description: 'Telegram did not answer in time' },
    ],
    [
      'an answer that is not JSON',
      Object.assign(new Error(`invalid json response body at ${url} reason: Unexpected token <`), { type: 'invalid-json' }),
      { kind: 'server', code: 'invalid_response', description: "Telegram's answer was not the Bot API's JSON (a proxy's error page?)" },
    ],
    [
      'a cause without a system code',
      new Error(`something about ${url}`),
      { kind: 'network', code: 'network', description: 'Telegram could not be reached (network)' },
    ],
  ])('%s', (_what, cause, failure) => {
    const described = telegramFailure(new HttpError("Network request for 'getMe' failed!", cause));
    expect(described).toStrictEqual(failure);
    expect(JSON.stringify(described)).not.toContain(TOKEN.split(':')[1]);
  });

  it('calls anything else a network failure, by its name only', () => {
    expect(telegramFailure(new TypeError(`bad ${TOKEN}`))).toStrictEqual({
      kind: 'network',
      code: 'unknown',
      description: 'The Bot API call failed before an answer (TypeError)',
    });
    expect(telegramFailure('text')).toMatchObject({ code: 'unknown', description: 'The Bot API call failed before an answer (string)' });
  });
});

describe('createTelegramApi against a local server', () => {
  /** Answers each request after `delayMs` with `body`, as `status`; records the paths asked. */
  let answer = { status: 200, body: '{"ok":true,"result":{}}', delayMs: 0 };
  const paths: string[] = [];
  let server: Server;
  let root: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      paths.push(req.url ?? '');
      setTimeout(() => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body), answer.delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('calls <apiRoot>/bot<token>/<method> and gives the result', async () => {
    answer = { status: 200, body: '{"ok":true,"result":{"id":42,"is_bot":true,"first_name":"Door","username":"door_bot"}}', delayMs: 0 };
    const me = await createTelegramApi(TOKEN, root).getMe();
    expect(me).toMatchObject({ id: 42, username: 'door_bot' });
    expect(paths.at(-1)).toBe(`/bot${TOKEN}/getMe`);
  });

  it("throws what telegramFailure reads as Telegram's error", async () => {
    answer = { status: 429, body: '{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}', delayMs: 0 };
    const err = await createTelegramApi(TOKEN, root).getMe().catch((e: unknown) => e);
    expect(telegramFailure(err)).toStrictEqual({ kind: 'rate_limited', code: '429', description: 'Too Many Requests: retry after 3', retryAfterSeconds: 3 });
  });

  it('an HTML error page is a server failure, and nothing said of it holds the token', async () => {
    answer = { status: 502, body: '<html>Bad Gateway</html>', delayMs: 0 };
    const err = await createTelegramApi(TOKEN, root).getMe().catch((e: unknown) => e);
    expect(telegramFailure(err)).toMatchObject({ kind: 'server', code: 'invalid_response' });
    // grammY's own message is safe to log as well (sensitiveLogs stays off).
    expect((err as Error).message).not.toContain(TOKEN);
  });

  it('gives up after the timeout it was given', async () => {
    answer = { status: 200, body: '{"ok":true,"result":true}', delayMs: 3_000 };
    const started = Date.now();
    const err = await createTelegramApi(TOKEN, root, { timeoutSeconds: 0.2 }).getMe().catch((e: unknown) => e);
    expect(telegramFailure(err)).toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a refused connection is a network failure with the system code', async () => {
    const err = await createTelegramApi(TOKEN, 'http://127.0.0.1:1').getMe().catch((e: unknown) => e);
    expect(telegramFailure(err)).toStrictEqual({ kind: 'network', code: 'ECONNREFUSED', description: 'Telegram could not be reached (ECONNREFUSED)' });
    expect((err as Error).message).not.toContain(TOKEN);
  });
});
