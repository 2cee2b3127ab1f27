import type { Api, ApiClientOptions, GrammyError, HttpError } from 'grammy';
import { LazyLibrary } from '../../lazy-library.js';

/**
 * The one place tenure builds a Telegram Bot API client: grammY's `Api` (docs/access-telegram.md), with `apiRoot` = TENURE_TELEGRAM_API_URL. No hand-written HTTP client
 * talks to Telegram.
 *
 * grammY puts the token in every request URL (`<apiRoot>/bot<token>/<method>`), and the errors of
 * its HTTP library quote that URL. So nothing here, and nothing built on it, logs a URL, a raw
 * error, its `message` of a network failure or the `Api` object itself (its `token` is public):
 * `telegramFailure` is what may be shown and logged.
 *
 * grammY is loaded at first use (src/lazy-library.ts): when a bot is held or a token checked. A
 * server with no Telegram bot never loads it.
 */

export const grammy = new LazyLibrary('grammy', () => import('grammy'));

/** Telegram answered the call with an error (`ok: false`). */
export const isGrammyError = (err: unknown): err is GrammyError => grammy.instanceOf(err, (lib) => lib.GrammyError);

/** The call got no answer from Telegram (grammY wraps the transport's error). */
export const isGrammyHttpError = (err: unknown): err is HttpError => grammy.instanceOf(err, (lib) => lib.HttpError);

/**
 * How long one call may take before grammY aborts it (its own default is 500 s, the Bot API
 * server's ceiling for uploads). tenure's calls are small and Telegram answers them in well under
 * a second; one hanging for 10 s is a network fault. Long polling passes its own, longer timeout.
 */
export const TELEGRAM_TIMEOUT_SECONDS = 10;

/**
 * A Bot API client for one bot. `apiUrl` is the Bot API root without the `/bot<token>` part
 * (TENURE_TELEGRAM_API_URL: Telegram itself, a local Bot API server, or a fake in tests; config
 * strips a trailing slash, which grammY refuses); `options` override grammY's own and the
 * timeout, except `sensitiveLogs`, which stays off: with it, grammY's error messages quote the
 * URL and so the token. grammY is loaded first (`grammy.load()`): the access worker loads it
 * before it takes a bot, a token check before its call.
 */
export function createTelegramApi(token: string, apiUrl: string, options: Omit<ApiClientOptions, 'apiRoot' | 'sensitiveLogs'> = {}): Api {
  const { Api } = grammy.get();
  return new Api(token, { timeoutSeconds: TELEGRAM_TIMEOUT_SECONDS, ...options, apiRoot: apiUrl, sensitiveLogs: false });
}

/**
 * What a failed Bot API call means, by what tenure does next:
 * - `unauthorized`: the token is not (or no longer) a bot's: 401, and 404, which the Bot API
 *   answers for a token it cannot even parse (tenure calls no method that does not exist). Stop
 *   using the token; the owner must connect a new one.
 * - `rate_limited`: 429 (flood control, limits unpublished); wait `retryAfterSeconds`, then retry.
 * - `forbidden`: 403: the bot cannot act in that chat (kicked from it, not a member, not an
 *   admin) or on that user (blocked the bot). Retrying does not help until someone changes it.
 * - `bad_request`: 400 and any other 4xx: the call itself was refused (chat not found, user not
 *   found, not enough rights, a group migrated to a supergroup: `migrateToChatId`). Retrying
 *   the same call does not help; `description` says which.
 * - `server`: a 5xx, or an answer that is not the Bot API's JSON (a proxy's error page).
 * - `network`: no answer at all (refused, reset, DNS); `code` is the system's (`ECONNREFUSED`).
 * - `timeout`: no answer within the client's timeout, or the call was aborted.
 * The last three are worth retrying later, on a schedule.
 *
 * `code` is Telegram's `error_code` as text (`'403'`), else the name of the failure
 * (`ECONNREFUSED`, `invalid_response`, `timeout`); with `description` it fits a `PlatformError`
 * (`{code, message}`). `description` is Telegram's own, or a fixed sentence of tenure's: never a
 * message of the HTTP library, which carries the URL and so the token.
 */
export type TelegramFailure =
  | { kind: 'rate_limited'; code: string; description: string; retryAfterSeconds: number }
  | { kind: 'bad_request'; code: string; description: string; migrateToChatId?: number }
  | { kind: 'unauthorized' | 'forbidden' | 'server' | 'network' | 'timeout'; code: string; description: string };

/** The wait after a 429 that names none (Telegram always does; a proxy in front of it may not). */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** What grammY threw for a Bot API call (anything else, too: it is called a network failure). Pure. */
export function telegramFailure(err: unknown): TelegramFailure {
  if (isGrammyError(err)) return apiFailure(err);
  if (isGrammyHttpError(err)) return transportFailure(err.error);
  // Not from a call's answer or transport (grammY wraps both): say so without quoting it.
  return { kind: 'network', code: 'unknown', description: `The Bot API call failed before an answer (${nameOf(err)})` };
}

function apiFailure(err: GrammyError): TelegramFailure {
  const code = String(err.error_code);
  const description = err.description;
  if (err.error_code === 429) {
    const named = err.parameters.retry_after;
    const retryAfterSeconds = typeof named === 'number' && named > 0 ? Math.ceil(named) : DEFAULT_RETRY_AFTER_SECONDS;
    return { kind: 'rate_limited', code, description, retryAfterSeconds };
  }
  if (err.error_code === 401 || err.error_code === 404) return { kind: 'unauthorized', code, description };
  if (err.error_code === 403) return { kind: 'forbidden', code, description };
  if (err.error_code >= 500) return { kind: 'server', code, description };
  const migrateTo = err.parameters.migrate_to_chat_id;
  return { kind: 'bad_request', code, description, ...(typeof migrateTo === 'number' ? { migrateToChatId: migrateTo } : {}) };
}

/** What grammY's HttpError wraps: node-fetch's FetchError or AbortError, or grammY's own timeout. */
function transportFailure(cause: unknown): TelegramFailure {
  const e = (typeof cause === 'object' && cause !== null ? cause : {}) as { name?: unknown; type?: unknown; code?: unknown; message?: unknown };
  // grammY's timeout rejects with a plain Error of its own making (no URL in it) and aborts the fetch.
  if (e.name === 'AbortError' || e.type === 'aborted' || (typeof e.message === 'string' && /^Request to '\w+' timed out after/.test(e.message))) {
    return { kind: 'timeout', code: 'timeout', description: 'Telegram did not answer in time' };
  }
  if (e.type === 'invalid-json' || e.name === 'SyntaxError') {
    return { kind: 'server', code: 'invalid_response', description: "Telegram's answer was not the Bot API's JSON (a proxy's error page?)" };
  }
  const system = typeof e.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(e.code) ? e.code : 'network';
  return { kind: 'network', code: system, description: `Telegram could not be reached (${system})` };
}

const nameOf = (err: unknown): string => (err instanceof Error && /^\w+$/.test(err.name) ? err.name : typeof err);
