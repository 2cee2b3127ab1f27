import { DiscordAPIError, HTTPError, type RequestBody } from '@discordjs/rest';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_REASON, isDiscordTarget, requestFor, resultOfError, TOKEN_REFUSED, type DiscordCall } from './discord.connector.js';
import { discordRest } from './discord-libraries.js';

// @discordjs/rest is loaded at first use (src/lazy-library.ts); these tests build its clients and errors directly.
beforeAll(() => discordRest.load());

const GUILD = '111111111111111111';
const ROLE = '222222222222222222';
const USER = '333333333333333333';
const role = (desired: DiscordCall['desired'], onExpiry: DiscordCall['onExpiry'] = 'remove_role'): DiscordCall => ({ kind: 'role', externalId: ROLE, guildId: GUILD, userId: USER, desired, onExpiry });
const guild = (desired: DiscordCall['desired'], onExpiry: DiscordCall['onExpiry'] = 'none'): DiscordCall => ({ kind: 'guild', externalId: GUILD, guildId: null, userId: USER, desired, onExpiry });

const body: Pick<RequestBody, 'files'> & { body: unknown } = { body: undefined, files: undefined };
const apiError = (status: number, code: number, message: string) =>
  new DiscordAPIError({ code, message }, code, status, 'PUT', `https://discord.test/api/v10/guilds/${GUILD}`, body);

describe('Discord connector: which call', () => {
  it.each([
    ['a role grant', role('granted'), { method: 'PUT', route: `/guilds/${GUILD}/members/${USER}/roles/${ROLE}`, reason: AUDIT_REASON.granted }],
    ['a role revoke (remove_role)', role('revoked'), { method: 'DELETE', route: `/guilds/${GUILD}/members/${USER}/roles/${ROLE}`, reason: AUDIT_REASON.revoked }],
    ['a guild grant: a check that the member is there', guild('granted'), { method: 'GET', route: `/guilds/${GUILD}/members/${USER}`, reason: undefined }],
    ['a guild revoke (kick)', guild('revoked', 'kick'), { method: 'DELETE', route: `/guilds/${GUILD}/members/${USER}`, reason: AUDIT_REASON.revoked }],
  ])('%s', (_name, row, expected) => {
    expect(requestFor(row)).toStrictEqual(expected);
  });

  it.each([
    ['a role revoke with on_expiry none', role('revoked', 'none')],
    ['a guild revoke with on_expiry none', guild('revoked', 'none')],
  ])('makes no call for %s', (_name, row) => {
    expect(requestFor(row)).toBeNull();
  });

  it('knows guilds and roles with a guild only', () => {
    expect(isDiscordTarget(role('granted'))).toBe(true);
    expect(isDiscordTarget({ ...role('granted'), guildId: null })).toBe(false);
    expect(isDiscordTarget({ kind: 'group', guildId: null })).toBe(false);
  });
});

describe('Discord connector: what an error means', () => {
  it.each([
    [403, 50013, 'Missing Permissions'],
    [404, 10011, 'Unknown Role'],
    [404, 10004, 'Unknown Guild'],
    [403, 50001, 'Missing Access'],
  ])('%i %i fails a grant and blames the target, with a hint', (status, code, message) => {
    const result = resultOfError(apiError(status, code, message), { desired: 'granted' });
    expect(result).toMatchObject({ outcome: 'failed', targetFault: true, error: { code: String(code) } });
    expect((result as { error: { message: string } }).error.message).toMatch(new RegExp(`^${message}: .+`));
  });

  it('fails a revoke the bot is not allowed to make (50013, 50001) and blames the target', () => {
    for (const [status, code] of [
      [403, 50013],
      [403, 50001],
    ] as const) {
      expect(resultOfError(apiError(status, code, 'x'), { desired: 'revoked' })).toMatchObject({ outcome: 'failed', targetFault: true });
    }
  });

  it.each([
    [404, 10011, 'Unknown Role'],
    [404, 10004, 'Unknown Guild'],
  ])('a revoke answered %i %i is done: nobody holds a role or a place that does not exist', (status, code, message) => {
    expect(resultOfError(apiError(status, code, message), { desired: 'revoked' })).toStrictEqual({ outcome: 'applied' });
  });

  it('10007 Unknown Member: a grant waits for the member, a revoke is done (they hold nothing)', () => {
    expect(resultOfError(apiError(404, 10007, 'Unknown Member'), { desired: 'granted' })).toMatchObject({
      outcome: 'waiting_for_member',
      error: { code: '10007' },
    });
    expect(resultOfError(apiError(404, 10007, 'Unknown Member'), { desired: 'revoked' })).toStrictEqual({ outcome: 'applied' });
  });

  it('10013 Unknown User: a grant fails this row only; a revoke is done', () => {
    expect(resultOfError(apiError(404, 10013, 'Unknown User'), { desired: 'granted' })).toStrictEqual({
      outcome: 'failed',
      targetFault: false,
      error: { code: '10013', message: 'Unknown User' },
    });
    expect(resultOfError(apiError(404, 10013, 'Unknown User'), { desired: 'revoked' })).toStrictEqual({ outcome: 'applied' });
  });

  it('another 4xx fails the row only (the same request would fail again)', () => {
    expect(resultOfError(apiError(400, 50035, 'Invalid Form Body'), { desired: 'granted' })).toStrictEqual({
      outcome: 'failed',
      targetFault: false,
      error: { code: '50035', message: 'Invalid Form Body' },
    });
  });

  it('401 and the library refusing to send without a token (after a 401): the bot is unauthorized', () => {
    expect(resultOfError(apiError(401, 0, '401: Unauthorized'), { desired: 'granted' })).toStrictEqual({ outcome: 'unauthorized', error: TOKEN_REFUSED });
    expect(resultOfError(new Error('Expected token to be set for this request, but none was present'), { desired: 'granted' })).toStrictEqual({
      outcome: 'unauthorized',
      error: TOKEN_REFUSED,
    });
  });

  it('a 5xx, a timeout, a network error are retried', () => {
    expect(resultOfError(new HTTPError(502, 'Bad Gateway', 'PUT', 'https://discord.test', body), { desired: 'granted' })).toMatchObject({
      outcome: 'retry',
      error: { code: 'server_error' },
    });
    const timeout = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(resultOfError(timeout, { desired: 'granted' })).toMatchObject({ outcome: 'retry', error: { code: 'timeout' } });
    const refused = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
    expect(resultOfError(refused, { desired: 'revoked' })).toStrictEqual({
      outcome: 'retry',
      error: { code: 'network', message: 'Discord could not be reached: fetch failed (connect ECONNREFUSED 127.0.0.1:1)' },
    });
  });

  it('a call this worker aborted (stopping, or the lease lost) records nothing', () => {
    expect(resultOfError(new Error('aborted'), { desired: 'granted' }, true)).toStrictEqual({ outcome: 'aborted' });
  });
});
