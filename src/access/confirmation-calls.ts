import type { MessageChannel, SendOutcome } from '../domain/front-desk/confirmations.js';
import type { Platform } from '../domain/targets/target.view.js';

/**
 * The platform calls of a confirmation (src/domain/front-desk/confirmations.ts): one message to one
 * member through the project's bot.
 *
 * - Discord: Create DM (`POST /users/@me/channels` `{recipient_id}`), then Create Message
 *   (`POST /channels/{channel.id}/messages` `{content}`). A member whose DMs are closed to the bot
 *   is refused with 403 and JSON code 50007 "Cannot send messages to this user".
 * - Telegram: `sendMessage` to the member's private chat (its id is the user's). 403 "Forbidden:
 *   bot was blocked by the user", 403 "…bot can't initiate conversation with a user" and 400 "Bad
 *   Request: chat not found" (the member never opened the bot) mean the bot cannot write to them.
 *
 * Answers name the platform's code and message, never the token (it is in Telegram's URL: a failed
 * request is described by its error code only).
 */

const TIMEOUT_MS = 10_000;

export function confirmationCalls(o: { discordApiUrl: string; telegramApiUrl: string; fetch?: typeof fetch }): MessageChannel {
  const doFetch = o.fetch ?? fetch;
  const call = async (url: string, init: RequestInit): Promise<{ status: number; headers: Headers; body: unknown } | { error: string }> => {
    try {
      const res = await doFetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const text = await res.text();
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      return { status: res.status, headers: res.headers, body };
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string } };
      return { error: e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? 'network error') };
    }
  };

  async function discord(token: string, userId: string, text: string): Promise<SendOutcome> {
    const headers = { Authorization: `Bot ${token}`, 'Content-Type': 'application/json' };
    const dm = await call(`${o.discordApiUrl}/v10/users/@me/channels`, { method: 'POST', headers, body: JSON.stringify({ recipient_id: userId }) });
    const opened = discordOutcome(dm);
    if (opened.kind !== 'sent') return opened;
    const channelId = (dm as { body: { id?: unknown } }).body?.id;
    if (typeof channelId !== 'string') return { kind: 'retry', error: 'invalid_response: no DM channel id' };
    return discordOutcome(
      await call(`${o.discordApiUrl}/v10/channels/${encodeURIComponent(channelId)}/messages`, { method: 'POST', headers, body: JSON.stringify({ content: text }) }),
    );
  }

  async function telegram(token: string, userId: string, text: string): Promise<SendOutcome> {
    const res = await call(`${o.telegramApiUrl}/bot${token}/sendMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ chat_id: userId, text }),
    });
    if ('error' in res) return { kind: 'retry', error: res.error };
    const body = (res.body ?? {}) as { ok?: boolean; error_code?: number; description?: string; parameters?: { retry_after?: number } };
    if (res.status === 200 && body.ok === true) return { kind: 'sent' };
    const error = `${res.status}: ${body.description ?? 'no description'}`;
    if (res.status === 429) return { kind: 'retry', error, retryAfterMs: seconds(body.parameters?.retry_after) };
    if (res.status >= 500) return { kind: 'retry', error };
    const description = body.description ?? '';
    if (res.status === 403 && /blocked by the user/i.test(description)) return { kind: 'unreachable', reason: 'bot_blocked', error };
    if ((res.status === 403 && /can't initiate conversation/i.test(description)) || (res.status === 400 && /chat not found/i.test(description))) {
      return { kind: 'unreachable', reason: 'no_conversation', error };
    }
    return { kind: 'failed', error };
  }

  return {
    send(platform: Platform, token: string, userId: string, text: string) {
      return platform === 'discord' ? discord(token, userId, text) : telegram(token, userId, text);
    },
  };
}

/** Discord's answer: 2xx sent; 403 50007 unreachable; 429 after its retry_after; 5xx again; else refused. */
function discordOutcome(res: { status: number; headers: Headers; body: unknown } | { error: string }): SendOutcome {
  if ('error' in res) return { kind: 'retry', error: res.error };
  if (res.status >= 200 && res.status < 300) return { kind: 'sent' };
  const body = (res.body ?? {}) as { code?: number; message?: string; retry_after?: number };
  const error = `${res.status}: ${body.code !== undefined ? `${body.code} ` : ''}${body.message ?? 'no message'}`;
  if (res.status === 429) return { kind: 'retry', error, retryAfterMs: seconds(body.retry_after ?? Number(res.headers.get('retry-after'))) };
  if (res.status >= 500) return { kind: 'retry', error };
  if (res.status === 403 && body.code === 50007) return { kind: 'unreachable', reason: 'dm_closed', error };
  return { kind: 'failed', error };
}

/** A platform's retry-after in seconds as milliseconds (at least 1 s, at most 1 h); undefined when not given. */
function seconds(s: number | undefined): number | undefined {
  if (s === undefined || !Number.isFinite(s) || s < 0) return undefined;
  return Math.min(Math.max(Math.ceil(s * 1000), 1000), 3_600_000);
}
