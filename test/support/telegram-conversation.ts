import { afterEach } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import { startTelegramUpdates, telegramUpdatesDeps, type TelegramUpdatesHandle } from '../../src/access/telegram/updates-runner.js';
import type { SentMessage } from './fake-telegram.js';
import type { Harness } from './harness.js';
import { capturedLogs } from './logs.js';
import { telegramProject, type TelegramProject } from './telegram.js';
import { TEST_UPDATES_OPTIONS, untilPolling } from './telegram-updates.js';
import { eventually } from './webhook-harness.js';

/**
 * The bot's conversation with members (docs/front-desk.md, "Telegram: the bot conversation") for
 * test/access/telegram-conversation*.test.ts: a project whose bot is connected and polled (or set
 * to a webhook) by a Telegram worker and its updates' loops, wired as the worker runtime wires
 * them, their log lines kept; members are users of the harness's fake Telegram who write to it.
 */

export interface Talking {
  p: TelegramProject;
  botId: number;
  /** The updates loops' log lines (warn and above). */
  logs: Record<string, unknown>[];
  /** Stops the worker and its loops (a restart: start another with `again`). */
  stop(): Promise<void>;
  /** A new worker and loops for the same project, as after a restart. */
  again(): Promise<void>;
}

/** `talking()`: a project whose bot hears its members; everything stopped after the test. */
export function useTalkingBot(h: Harness, makeWorker: () => AccessWorker<TelegramClient>): (o?: { mode?: 'polling' | 'webhook'; webhookUrl?: string; project?: TelegramProject }) => Promise<Talking> {
  const running: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of running.splice(0).reverse()) await stop();
  });
  return async (o = {}) => {
    const p = o.project ?? (await telegramProject(h));
    const { lines, logger } = capturedLogs('warn');
    let current: { w: AccessWorker<TelegramClient>; u: TelegramUpdatesHandle } | null = null;
    const start = async () => {
      const w = makeWorker();
      const deps = { ...telegramUpdatesDeps(h.container), logger, mode: o.mode ?? 'polling', webhookUrl: o.webhookUrl, random: () => 0.5 };
      const u = startTelegramUpdates(w, deps, TEST_UPDATES_OPTIONS);
      current = { w, u };
      w.start();
      if ((o.mode ?? 'polling') === 'polling') await untilPolling(h.telegram, p.bot);
    };
    const stop = async () => {
      if (!current) return;
      const { w, u } = current;
      current = null;
      await u.stop();
      await w.stop(0);
    };
    running.push(stop);
    await start();
    return { p, botId: Number(p.bot.id), logs: lines, stop, again: start };
  };
}

/** The bot's messages in the chat once there are `count` of them (waits for them). */
export async function messagesIn(h: Harness, botId: number, chatId: number, count: number): Promise<SentMessage[]> {
  await eventually(() => h.telegram.messages(botId, chatId).length >= count, `${count} message(s) from the bot in chat ${chatId}`);
  return h.telegram.messages(botId, chatId);
}

/** The buttons of a message, as [text, url or callback_data] per row. */
export const buttonsOf = (m: SentMessage | undefined): [string, string][][] =>
  (m?.reply_markup?.inline_keyboard ?? []).map((row) => row.map((b) => [b.text, b.url ?? b.callback_data ?? '']));
