import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkTelegramLogin, MAX_AGE_MS, MAX_SKEW_MS } from './telegram-login.js';

/**
 * The widget's answer checked as Telegram documents it. The expected hash is computed here, step by
 * step from the documentation (not with the module's own helper): the data-check-string, the
 * secret key SHA-256(token), the hex HMAC-SHA-256.
 */

const TOKEN = '7000000001:AAHk3vXJ9p0bqLr2sYt4uVw6xYz8aBcDeFg';
const NOW = new Date('2026-11-28T04:00:00.000Z');
const seconds = (d: Date) => String(Math.floor(d.getTime() / 1000));

function signed(fields: Record<string, string>, token = TOKEN): URLSearchParams {
  const dataCheckString = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const key = createHash('sha256').update(token).digest();
  return new URLSearchParams({ ...fields, hash: createHmac('sha256', key).update(dataCheckString).digest('hex') });
}

const widget = (o: Record<string, string> = {}) =>
  signed({ id: '424242', first_name: 'Ada', last_name: 'Lovelace', username: 'ada', photo_url: 'https://t.me/i/userpic/320/ada.jpg', auth_date: seconds(NOW), ...o });

describe('checkTelegramLogin', () => {
  it('accepts the widget’s answer signed with the bot’s token, and says who signed in', () => {
    const checked = checkTelegramLogin(widget(), TOKEN, NOW);
    expect(checked).toStrictEqual({
      kind: 'ok',
      hash: widget().get('hash'),
      validUntil: new Date(NOW.getTime() + MAX_AGE_MS + MAX_SKEW_MS),
      user: { id: '424242', firstName: 'Ada', lastName: 'Lovelace', username: 'ada', photoUrl: 'https://t.me/i/userpic/320/ada.jpg', authDate: NOW },
    });
  });

  it('accepts an answer with only some of the optional fields (a user without a username or photo)', () => {
    const checked = checkTelegramLogin(signed({ id: '77', first_name: 'Bo', auth_date: seconds(NOW) }), TOKEN, NOW);
    expect(checked).toMatchObject({ kind: 'ok', user: { id: '77', firstName: 'Bo', lastName: null, username: null, photoUrl: null } });
  });

  it('refuses a hash that does not match: another bot’s token, one character changed, or a field changed', () => {
    expect(checkTelegramLogin(widget(), '7000000002:AAHk3vXJ9p0bqLr2sYt4uVw6xYz8aBcDeFg', NOW)).toStrictEqual({ kind: 'bad-hash' });
    const flipped = widget();
    const hash = flipped.get('hash')!;
    flipped.set('hash', `${hash.slice(0, -1)}${hash.endsWith('0') ? '1' : '0'}`);
    expect(checkTelegramLogin(flipped, TOKEN, NOW)).toStrictEqual({ kind: 'bad-hash' });
    const otherId = widget();
    otherId.set('id', '424243');
    expect(checkTelegramLogin(otherId, TOKEN, NOW)).toStrictEqual({ kind: 'bad-hash' });
  });

  it('refuses a field added after signing (one of ours, or Telegram’s), and a field dropped', () => {
    const added = widget();
    added.set('plan_id', '0b6e4f00-0000-4000-8000-000000000000');
    expect(checkTelegramLogin(added, TOKEN, NOW)).toStrictEqual({ kind: 'bad-hash' });
    const dropped = widget();
    dropped.delete('username');
    expect(checkTelegramLogin(dropped, TOKEN, NOW)).toStrictEqual({ kind: 'bad-hash' });
  });

  it('refuses an answer missing id, auth_date or hash, or giving a field twice, before any hashing', () => {
    for (const field of ['id', 'auth_date', 'hash']) {
      const missing = widget();
      missing.delete(field);
      expect(checkTelegramLogin(missing, TOKEN, NOW), field).toMatchObject({ kind: 'malformed', reason: expect.stringContaining(field) });
    }
    const twice = widget();
    twice.append('id', '1');
    expect(checkTelegramLogin(twice, TOKEN, NOW)).toMatchObject({ kind: 'malformed', reason: 'id is given more than once' });
    expect(checkTelegramLogin(widget({ id: '-5' }), TOKEN, NOW)).toMatchObject({ kind: 'malformed' });
    expect(checkTelegramLogin(widget({ auth_date: '2026-11-28' }), TOKEN, NOW)).toMatchObject({ kind: 'malformed' });
  });

  it(`refuses a login older than ${MAX_AGE_MS / 60_000} minutes, or dated ahead of our clock by more than ${MAX_SKEW_MS / 1000} s; accepts the edges`, () => {
    const at = (ms: number) => seconds(new Date(NOW.getTime() + ms));
    expect(checkTelegramLogin(widget({ auth_date: at(-MAX_AGE_MS) }), TOKEN, NOW)).toMatchObject({ kind: 'ok' });
    expect(checkTelegramLogin(widget({ auth_date: at(-MAX_AGE_MS - 1000) }), TOKEN, NOW)).toMatchObject({ kind: 'stale' });
    expect(checkTelegramLogin(widget({ auth_date: at(-86_400_000) }), TOKEN, NOW)).toMatchObject({ kind: 'stale' });
    expect(checkTelegramLogin(widget({ auth_date: at(MAX_SKEW_MS) }), TOKEN, NOW)).toMatchObject({ kind: 'ok' });
    expect(checkTelegramLogin(widget({ auth_date: at(MAX_SKEW_MS + 1000) }), TOKEN, NOW)).toMatchObject({ kind: 'stale' });
  });

  it('checks the hash before the date: a forged answer with a stale date is a bad hash, not merely old', () => {
    const forged = widget({ auth_date: seconds(new Date(NOW.getTime() - 3_600_000)) });
    forged.set('first_name', 'Eve');
    expect(checkTelegramLogin(forged, TOKEN, NOW)).toStrictEqual({ kind: 'bad-hash' });
  });
});
