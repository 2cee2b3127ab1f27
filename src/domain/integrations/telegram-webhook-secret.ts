import { createHmac } from 'node:crypto';
import type { SecretBox } from './secret-box.js';
import { sameText } from '../same-text.js';

/**
 * The secret token Telegram sends with every webhook delivery of a bot
 * (`X-Telegram-Bot-Api-Secret-Token`, set by `setWebhook(secret_token)`; docs/access-telegram.md):
 * HMAC-SHA256 of the project id and the bot id under a key derived from the instance's
 * encryption key. Nothing is stored: every process sharing TENURE_ENCRYPTION_KEY computes the same
 * token, the worker that sets the webhook and the API process that receives it alike; a new bot
 * (a reconnection) gets a new token, and the old bot's deliveries are refused.
 */

/** The purpose the key is derived for (SecretBox.derive): changing it changes every bot's token. */
const PURPOSE = 'telegram webhook secret token';

export class TelegramWebhookSecrets {
  private constructor(private readonly key: Buffer) {}

  /** The instance's secrets (its secret box); null when the instance has no key, and so no bots. */
  static of(box: SecretBox | null): TelegramWebhookSecrets | null {
    return box ? new TelegramWebhookSecrets(box.derive(PURPOSE)) : null;
  }

  /**
   * The bot's token: 43 base64url characters, within what Telegram accepts (1-256 of
   * `A-Za-z0-9_-`). The two ids are joined with a NUL, which neither holds, so no pair of ids
   * shares another pair's input.
   */
  tokenFor(projectId: string, botId: string): string {
    return createHmac('sha256', this.key).update(`${projectId}\0${botId}`).digest('base64url');
  }

  /** Whether `presented` (the header as received) is the bot's token; compared in constant time. */
  verify(projectId: string, botId: string, presented: string | undefined): boolean {
    return sameText(presented ?? '', this.tokenFor(projectId, botId));
  }
}
