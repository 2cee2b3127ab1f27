import type { TelegramBotKey, TelegramUpdatesStore } from '../../store/telegram-updates.store.js';
import type { Clock } from '../clock.js';
import { keepsUpdate } from '../front-desk/telegram-talk.js';
import { fail, ok, type Result } from '../errors.js';
import { isUuid } from '../ids.js';
import type { TelegramWebhookSecrets } from './telegram-webhook-secret.js';

/** The statements of TelegramUpdatesStore this uses (a narrow port: tests give it a small twin). */
export type TelegramUpdatesStatements = Pick<TelegramUpdatesStore, 'receiveWebhook' | 'webhookBot'>;

/**
 * Telegram's deliveries of a bot's updates to `POST /telegram/updates/{project_id}`
 * (docs/access-telegram.md, TENURE_TELEGRAM_UPDATES=webhook): a delivery is the bot's when it carries the bot's
 * secret token (TelegramWebhookSecrets), and is stored, only stored, in the bot's inbox
 * (`telegram_updates`); the worker holding the bot handles it (src/access/telegram/updates.ts).
 */

/**
 * The kinds of update tenure asks Telegram for (getUpdates' and setWebhook's `allowed_updates`):
 * access's (joins, leaves, join requests, the bot's own rights) and the members' conversation with
 * the bot (docs/front-desk.md: private messages, inline button presses).
 */
export const TELEGRAM_UPDATE_KINDS = ['chat_member', 'chat_join_request', 'my_chat_member', 'message', 'callback_query'] as const;

/** An Update as the route's schema lets it through: its id, and at most the kinds tenure reads (others are kept as sent). */
export interface WebhookUpdate {
  update_id: number;
  [field: string]: unknown;
}

/** What became of a delivery: stored, a repeat of one stored already, or of a kind tenure does not ask for (dropped). */
export type Delivery = { update_id: number; result: 'stored' | 'duplicate' | 'ignored' };

const SECRET_HEADER = 'X-Telegram-Bot-Api-Secret-Token';

export class TelegramWebhookService {
  constructor(
    private readonly store: TelegramUpdatesStatements,
    /** Null when the instance has no encryption key (no bot can be connected then). */
    private readonly secrets: TelegramWebhookSecrets | null,
    private readonly options: { enabled: boolean },
    private readonly clock: Clock,
  ) {}

  /**
   * The bot whose delivery this is: the project's connected Telegram bot, when `secretToken` is
   * its token. NOT_FOUND when updates come by long polling here; UNAUTHORIZED for anything else
   * (no such project or bot, a token missing, repeated or wrong), which says no more than that.
   */
  async authenticate(projectId: string, secretToken: string | string[] | undefined): Promise<Result<TelegramBotKey>> {
    if (!this.options.enabled) {
      return fail('NOT_FOUND', 'Telegram updates are received by long polling on this instance (TENURE_TELEGRAM_UPDATES=polling): nothing is posted here');
    }
    const refused = fail<TelegramBotKey>('UNAUTHORIZED', `${SECRET_HEADER} is missing or is not the token tenure set for this project's bot with setWebhook`);
    const botId = this.secrets && isUuid(projectId) ? await this.store.webhookBot(projectId) : null;
    if (!this.secrets || botId === null || Array.isArray(secretToken)) return refused;
    return this.secrets.verify(projectId, botId, secretToken) ? ok({ projectId, botId }) : refused;
  }

  /**
   * Stores `update` in the bot's inbox (a repeat is a no-op), where the holder's worker handles it.
   * An update of a kind tenure does not ask for (an old webhook's `allowed_updates`), and what is
   * said in a group (an admin bot hears every message there; none is answered), is answered and
   * dropped: nothing of it is read, so nothing of it is kept.
   */
  async receive(bot: TelegramBotKey, update: WebhookUpdate): Promise<Result<Delivery>> {
    const kinds = TELEGRAM_UPDATE_KINDS.filter((kind) => update[kind] !== undefined);
    if (kinds.length > 1) {
      return fail('VALIDATION_ERROR', `An update carries one of ${TELEGRAM_UPDATE_KINDS.join(', ')}, not several (this one: ${kinds.join(', ')})`);
    }
    if (kinds.length === 0 || !keepsUpdate(update)) return ok({ update_id: update.update_id, result: 'ignored' });
    const stored = await this.store.receiveWebhook(bot, this.clock.now(), { updateId: update.update_id, payload: update });
    return ok({ update_id: update.update_id, result: stored ? 'stored' : 'duplicate' });
  }
}
