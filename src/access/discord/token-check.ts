import type { BotTokenCheck, TokenVerdict } from '../../domain/integrations/integrations.service.js';
import { discordRest, isDiscordApiError, isDiscordHttpError, isDiscordRateLimitError } from './discord-libraries.js';
import { fetchApplication } from './front-desk-calls.js';
import { createDiscordRest, fetchBotUser } from './rest.js';

/**
 * How a Discord bot token is taken and checked before it is stored (docs/access.md, "Connecting a
 * bot"): `GET /users/@me` with it, then `GET /applications/@me` (the commands for members need
 * its id and verify_key), through @discordjs/rest like every other call.
 */

/** Discord's tokens are about 70 characters today; the bound leaves room for a longer format. */
export const MAX_TOKEN_LENGTH = 200;
const TOKEN_SHAPE = /^[\x21-\x7e]+$/;

/**
 * The token as Discord takes it. Surrounding whitespace is dropped, and a leading `Bot ` too: that
 * is how the token appears in an Authorization header, and owners paste it from there. Whatever
 * is left must be printable ASCII without spaces: anything else cannot be a token, and could not
 * even be sent in a header.
 */
export function normalizeDiscordToken(raw: string): { token: string } | { problem: string } {
  const token = raw.trim().replace(/^Bot(?:\s+|$)/i, '');
  if (token.length === 0) return { problem: 'bot_token must not be empty: copy it from the Discord Developer Portal (your application, Bot, Reset Token)' };
  if (token.length > MAX_TOKEN_LENGTH) return { problem: `bot_token must be at most ${MAX_TOKEN_LENGTH} characters` };
  if (!TOKEN_SHAPE.test(token)) return { problem: 'bot_token must be the bot token alone: printable ASCII characters without spaces' };
  return { token };
}

/**
 * The request path waits for this check, so it is short: one retry of a 5xx or a timeout, 5 s a
 * try, and a rate limit is reported rather than waited out.
 */
const CHECK_OPTIONS = { retries: 1, timeout: 5_000, rejectOnRateLimit: () => true } as const;

const UNAVAILABLE = 'Nothing was stored; try again in a moment';

/** The verdict of Discord's answer to `GET /users/@me`. */
export function verdictOf(err: unknown): TokenVerdict {
  if (isDiscordApiError(err) && err.status === 401) {
    return {
      ok: false,
      refused: true,
      message: 'Discord refused bot_token (401 Unauthorized): copy the current token from the Discord Developer Portal (your application, Bot, Reset Token)',
    };
  }
  if (isDiscordRateLimitError(err)) {
    const retryAfterSeconds = Math.max(1, Math.ceil(err.retryAfter / 1000));
    return { ok: false, refused: false, message: `Discord is rate limiting the token check; ${UNAVAILABLE.toLowerCase()}`, retryAfterSeconds };
  }
  if (isDiscordApiError(err) || isDiscordHttpError(err)) {
    return { ok: false, refused: false, message: `Discord answered the token check with HTTP ${err.status}. ${UNAVAILABLE}` };
  }
  const reason = (err as { name?: string }).name === 'AbortError' ? 'timed out' : 'unreachable';
  return { ok: false, refused: false, message: `Discord could not be asked to check the token (${reason}). ${UNAVAILABLE}` };
}

export function discordTokenCheck(apiUrl: string): BotTokenCheck {
  return {
    label: 'Discord',
    normalize: normalizeDiscordToken,
    async verify(token) {
      await discordRest.load();
      const rest = createDiscordRest(token, apiUrl, CHECK_OPTIONS);
      try {
        const bot = await fetchBotUser(rest);
        // The application too, so the owner gives the token only: its id registers the commands,
        // its verify_key checks the interactions Discord signs.
        const application = await fetchApplication(rest);
        return { ok: true, botId: bot.id, botName: bot.username, application };
      } catch (err) {
        return verdictOf(err);
      } finally {
        rest.clearHashSweeper();
        rest.clearHandlerSweeper();
      }
    },
  };
}
