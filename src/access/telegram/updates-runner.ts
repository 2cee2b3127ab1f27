import type { Container } from '../../container.js';
import { TelegramUpdateHandling } from '../../domain/access/telegram-update-effects.js';
import { TelegramConversation } from '../../domain/front-desk/telegram-conversation.js';
import { TelegramWebhookSecrets } from '../../domain/integrations/telegram-webhook-secret.js';
import type { BotLeases, HeldBot } from '../bot-leases.js';
import type { TelegramClient } from './client.js';
import { DEFAULT_TELEGRAM_UPDATES_OPTIONS, TelegramUpdates, type TelegramUpdatesDeps, type TelegramUpdatesOptions } from './updates.js';

/**
 * The updates of every Telegram bot a process holds: one `TelegramUpdates` loop per held bot
 * (updates.ts), started when its lease is taken, forgotten when it is let go, and woken by the
 * webhook route's commits.
 */

/** The deps as a process has them: the configuration's mode and URLs, the instance's secrets, the database's wake-ups. */
export function telegramUpdatesDeps(c: Container): TelegramUpdatesDeps {
  const { access } = c.config;
  return {
    store: c.stores.telegramUpdates,
    handling: new TelegramUpdateHandling(c.transactor),
    conversation: new TelegramConversation(
      { plans: c.stores.plans, memberships: c.stores.memberships, payLinks: c.services.payLinks, portal: c.services.portal, reachable: c.stores.notifications },
      c.clock,
    ),
    apiUrl: access.telegramApiUrl,
    mode: access.telegram.updates,
    webhookUrl: access.telegram.webhookUrl,
    secrets: TelegramWebhookSecrets.of(c.secretBox),
    wakeups: c.database.wakeups,
    clock: c.clock,
    logger: c.logger,
  };
}

export interface TelegramUpdatesHandle {
  /** The bots whose updates this process handles now, by project. */
  readonly bots: ReadonlyMap<string, TelegramUpdates>;
  /** Looks for stored updates of the bots held here (webhook mode: the route stored some). */
  wake(): void;
  /** Stops every bot's loop (updates being handled are left for the next holder). */
  stop(): Promise<void>;
}

/**
 * Receives and handles the updates of every Telegram bot `worker` holds: a loop per bot from the
 * moment its lease is taken (`leases.onAcquired`) until it is let go (its `signal`). In webhook
 * mode, each commit of the `access` topic (the route's inserts among them, from any process)
 * wakes the loops of the bots with updates waiting.
 */
export function startTelegramUpdates(
  worker: { readonly leases: BotLeases<TelegramClient> },
  deps: TelegramUpdatesDeps,
  options: TelegramUpdatesOptions = DEFAULT_TELEGRAM_UPDATES_OPTIONS,
): TelegramUpdatesHandle {
  const { leases } = worker;
  const bots = new Map<string, TelegramUpdates>();
  let stopped = false;
  const take = (bot: HeldBot<TelegramClient>) => {
    if (stopped || bots.get(bot.projectId)?.bot === bot) return;
    const loop = new TelegramUpdates(bot, leases.id, deps, options);
    bots.set(bot.projectId, loop);
    void loop.done.finally(() => {
      if (bots.get(bot.projectId) === loop) bots.delete(bot.projectId);
    });
  };
  // A bot let go needs no hook: its signal aborts, its loop ends and is forgotten.
  const offAcquired = leases.onAcquired((taken) => taken.forEach(take));
  for (const bot of leases.held()) take(bot);

  // In webhook mode the route's commits say which bots have updates; one look at a time.
  let looking: Promise<void> | null = null;
  let again = false;
  const look = (): void => {
    if (stopped) return;
    if (looking) {
      again = true;
      return;
    }
    looking = deps.store
      .withUnhandled([...bots.keys()])
      .then((waiting) => {
        for (const projectId of waiting) bots.get(projectId)?.wake();
      })
      .catch((err: unknown) => deps.logger.warn({ err }, 'telegram updates: looking for stored updates failed; the next poll looks again'))
      .finally(() => {
        looking = null;
        if (again) {
          again = false;
          look();
        }
      });
  };
  const unsubscribe = deps.mode === 'webhook' && deps.wakeups ? deps.wakeups.subscribe('access', look) : null;
  unsubscribe?.catch((err: unknown) => deps.logger.warn({ err }, 'telegram updates: no wake-ups; the webhook inbox is looked at every poll'));

  return {
    bots,
    wake: look,
    async stop() {
      stopped = true;
      offAcquired();
      await unsubscribe?.then((off) => off()).catch(() => undefined);
      await looking;
      await Promise.all([...bots.values()].map((loop) => loop.stop()));
    },
  };
}
