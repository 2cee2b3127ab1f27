import type { BotTokenCheck, TokenVerdict } from '../../domain/integrations/integrations.service.js';
import { createTelegramApi, grammy, telegramFailure, type TelegramFailure } from './api.js';
import { askChatRights } from './chat-rights.js';

/**
 * How a Telegram bot token is taken and checked before it is stored (docs/access-telegram.md,
 * "3. Give tenure the token"): `getMe` with it, through grammY like every other call; and the
 * bot's rights in the target chats for the connection's status (chat-rights.ts).
 */

/**
 * Telegram's tokens are the bot's id, a colon and a 35-character secret
 * (`123456789:AAH…`). The shape taken is wider (an id of up to 20 digits, a secret of 30 to 100
 * URL-safe characters), so a longer format Telegram may bring is not refused here; anything
 * outside it cannot be a token, and is refused without asking Telegram.
 */
const TOKEN_SHAPE = /^\d{1,20}:[A-Za-z0-9_-]{30,100}$/;

const WHERE = '@BotFather gives it: send /token and choose the bot';
export const EMPTY_TOKEN = `bot_token must not be empty: ${WHERE}`;
export const NOT_A_TOKEN = `bot_token must be a Telegram bot token, the bot's id, a colon and its secret (123456789:AAH…); ${WHERE}`;

/**
 * The token as Telegram takes it. Surrounding whitespace is dropped, and a leading `bot` before
 * the id too: that is how the token appears in a Bot API URL (`/bot123456789:AAH…/getMe`), and
 * owners paste it from there.
 */
export function normalizeTelegramToken(raw: string): { token: string } | { problem: string } {
  const token = raw.trim().replace(/^bot(?=\d)/, '');
  if (token.length === 0) return { problem: EMPTY_TOKEN };
  if (!TOKEN_SHAPE.test(token)) return { problem: NOT_A_TOKEN };
  return { token };
}

/**
 * The request waits for these calls, so they are short: 5 s each, one try (a 5xx or a timeout
 * is reported, not retried), and a flood limit is reported rather than waited out.
 */
const CHECK_TIMEOUT_SECONDS = 5;

const UNAVAILABLE = 'Nothing was stored; try again in a moment';

/** The verdict of Telegram's answer to `getMe`. Pure. */
export function verdictOf(failure: TelegramFailure): TokenVerdict {
  switch (failure.kind) {
    case 'unauthorized':
      return {
        ok: false,
        refused: true,
        message: `Telegram refused bot_token (${failure.code} ${failure.description}): copy the current token from @BotFather (send /token and choose the bot)`,
      };
    case 'rate_limited':
      return { ok: false, refused: false, message: `Telegram is rate limiting the token check; ${UNAVAILABLE.toLowerCase()}`, retryAfterSeconds: failure.retryAfterSeconds };
    case 'network':
      return { ok: false, refused: false, message: `Telegram could not be asked to check the token (unreachable). ${UNAVAILABLE}` };
    case 'timeout':
      return { ok: false, refused: false, message: `Telegram could not be asked to check the token (timed out). ${UNAVAILABLE}` };
    default:
      // An error of Telegram's (a 5xx, an unexpected 4xx), or an answer that was not the Bot API's.
      return /^\d+$/.test(failure.code)
        ? { ok: false, refused: false, message: `Telegram answered the token check with ${failure.code} ${failure.description}. ${UNAVAILABLE}` }
        : { ok: false, refused: false, message: `Telegram's answer to the token check could not be read (${failure.code}). ${UNAVAILABLE}` };
  }
}

export function telegramTokenCheck(apiUrl: string): BotTokenCheck {
  const apiOf = async (token: string) => {
    await grammy.load();
    return createTelegramApi(token, apiUrl, { timeoutSeconds: CHECK_TIMEOUT_SECONDS });
  };
  return {
    label: 'Telegram',
    normalize: normalizeTelegramToken,
    async verify(token) {
      try {
        const me = await (await apiOf(token)).getMe();
        return { ok: true, botId: String(me.id), botName: me.username };
      } catch (err) {
        return verdictOf(telegramFailure(err));
      }
    },
    chatRights: async (token, botId, chats) => askChatRights(await apiOf(token), botId, chats),
  };
}
