import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { TelegramLoginCheck } from '../domain/web/telegram-login.service.js';

/**
 * The Telegram Login Widget's answer, checked as Telegram documents it (core.telegram.org/widgets/login,
 * "Checking authorization"; docs/web.md, "Signing in with Telegram"). The widget sends the browser
 * to its `data-auth-url` with the user's `id`, `first_name`, `last_name`, `username`, `photo_url`,
 * `auth_date` and `hash`. The data-check-string is every received field but `hash`, sorted by key,
 * as `key=value` lines joined by a line feed; the secret key is the SHA-256 digest (raw bytes) of
 * the bot's token; the answer is genuine when `hash` is the hex HMAC-SHA-256 of that string under
 * that key. A field added or dropped on the way changes the string, so the hash no longer matches.
 * `auth_date` must also be recent: Telegram signs no nonce, so a login is refused once it is older
 * than MAX_AGE_MS (and when it claims to come from more than MAX_SKEW_MS in the future).
 */

/** How old a widget login may be when it reaches tenure: a click, a confirmation, a redirect. */
export const MAX_AGE_MS = 10 * 60_000;
/** How far ahead of tenure's clock Telegram's may be. */
export const MAX_SKEW_MS = 60_000;

const ID = /^[1-9][0-9]{0,19}$/;
const AUTH_DATE = /^[0-9]{1,12}$/;
const HASH = /^[0-9a-f]{64}$/;

/** Checks the widget's answer (`query`: the callback's query string, as received) against the bot's token. */
export function checkTelegramLogin(query: URLSearchParams, botToken: string, now: Date): TelegramLoginCheck {
  const fields = new Map<string, string>();
  for (const [key, value] of query) {
    if (fields.has(key)) return { kind: 'malformed', reason: `${key} is given more than once` };
    fields.set(key, value);
  }
  const hash = fields.get('hash');
  const id = fields.get('id');
  const authDate = fields.get('auth_date');
  if (hash === undefined || !HASH.test(hash)) return { kind: 'malformed', reason: 'hash is missing or not 64 hex digits' };
  if (id === undefined || !ID.test(id)) return { kind: 'malformed', reason: 'id is missing or not a Telegram user id' };
  if (authDate === undefined || !AUTH_DATE.test(authDate)) return { kind: 'malformed', reason: 'auth_date is missing or not a Unix time' };

  if (!sameHex(hash, signatureOf(fields, botToken))) return { kind: 'bad-hash' };

  const at = new Date(Number(authDate) * 1000);
  const age = now.getTime() - at.getTime();
  if (age > MAX_AGE_MS || age < -MAX_SKEW_MS) return { kind: 'stale', authDate: at };
  const text = (key: string) => fields.get(key) ?? null;
  return { kind: 'ok', hash, validUntil: new Date(at.getTime() + MAX_AGE_MS + MAX_SKEW_MS), user: { id, firstName: text('first_name'), lastName: text('last_name'), username: text('username'), photoUrl: text('photo_url'), authDate: at } };
}

/** The hex HMAC-SHA-256 of the data-check-string of `fields` (all but `hash`), keyed with SHA-256(bot token). */
export function signatureOf(fields: Iterable<[string, string]>, botToken: string): string {
  const dataCheckString = [...fields]
    .filter(([key]) => key !== 'hash')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
  const secretKey = createHash('sha256').update(botToken).digest();
  return createHmac('sha256', secretKey).update(dataCheckString).digest('hex');
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
