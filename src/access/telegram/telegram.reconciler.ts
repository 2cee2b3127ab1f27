import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import { noChatRepairs, type TelegramReconcileStore, type ChatError, type ChatRepairs, type ManagedChat } from '../../store/telegram-reconcile.store.js';
import { WakeLoop } from '../../wake-loop.js';
import type { HeldBot } from '../bot-leases.js';
import type { TelegramFailure } from './api.js';
import { askChatMembers, type ChatMemberReader, type Halt } from './chat-members.js';

/**
 * Telegram drift repair (docs/access-telegram.md, "Telegram drift repair"): every `TENURE_ACCESS_RECONCILE_SECONDS`, each Telegram bot this process holds (the
 * Telegram access worker's lease: its calls stay within the bot's one budget, through its one
 * client, paced per chat) is compared with Telegram:
 *
 * 1. the project is planned again (AccessPlanStore.planProject), as on Discord;
 * 2. Telegram has no member list a bot may read, so for each chat target the members tenure
 *    manages there are asked about one by one (`getChatMember`), a few at a time, a page of rows
 *    at a time, and each page's answers are compared with those rows in one statement
 *    (src/store/telegram-reconcile.store.ts). Members tenure has no row for are never asked about.
 *
 * A repair only marks rows (`pending`, with what Telegram showed as `applied`); the worker makes
 * the call and writes its event, as for any change. A chat the bot cannot see (403, 400 "chat not
 * found") flags its target unhealthy and its rows are left; a 429 ends the bot's pass, which starts
 * again after `retry_after`. Nothing here logs a grammY error or a URL (the token is in it): only
 * `telegramFailure`'s code and description.
 */

/** Rows read, and asked about, per page: one statement of answers per page. */
export const ASK_PAGE = 200;
/**
 * Questions in flight per bot. The bot's client spaces calls to one chat (TENURE_TELEGRAM_CHAT_PER_SECOND)
 * anyway; a few in flight keep that pace without a queue of hundreds behind one chat's limit.
 */
export const ASK_AT_ONCE = 4;
/** How long a bot's comparison waits after Telegram failed to answer (5xx, network, timeout, a refused token). */
export const FAILURE_PAUSE_MS = 30_000;

/** The Telegram bots this process may call: the Telegram access worker's leases and clients. */
export interface HeldTelegramBots<C extends ChatMemberReader> {
  /** The lease owner id of this process's Telegram access worker (`integrations.lease_owner`). */
  readonly id: string;
  /** Runs `work` with the bot of `projectId` if it is held here; its `signal` aborts when the bot is let go. */
  withBot<T>(projectId: string, work: (bot: HeldBot<C>) => Promise<T>): Promise<T | null>;
}

export interface TelegramReconcilerDeps<C extends ChatMemberReader> {
  store: TelegramReconcileStore;
  /** Plans the whole project again (AccessPlanStore.planProject). */
  planProject(projectId: string): Promise<unknown>;
  /** The bots held, each with its client (getChatMember goes through it, at its pace). */
  bots: HeldTelegramBots<C>;
  clock: Clock;
  logger: Logger;
}

export interface TelegramReconcilerOptions {
  /** How old a comparison may get (TENURE_ACCESS_RECONCILE_SECONDS). */
  everyMs: number;
  /** How often the bots held are looked at (a newly held bot, never compared, is due at once). */
  tickMs: number;
  /** Rows per page (default ASK_PAGE). */
  pageSize?: number;
  /** Questions in flight per bot (default ASK_AT_ONCE). */
  atOnce?: number;
}

export interface ChatReport {
  targetId: string;
  chatId: string;
  /** Members asked about (answers received). */
  asked: number;
  pages: number;
  repairs: ChatRepairs;
  /** Set when the bot cannot see the chat: the target is now unhealthy with it. */
  error?: ChatError;
}

export interface TelegramProjectReport {
  projectId: string;
  chats: ChatReport[];
  /**
   * False when the pass stopped before its end (the bot let go, a 429, Telegram not answering): the
   * comparison is not recorded, and is made again (after `retryAfterMs`, if set) by whoever holds the bot.
   */
  completed: boolean;
  /** Why the pass stopped, as Telegram said it (code and description only). */
  stoppedBy?: ChatError;
  /** When it stopped on a 429 or a failure: how long until the bot is compared again. */
  retryAfterMs?: number;
}

/** How long to leave a bot after a failure that stopped its pass. */
const pauseAfter = (failure: TelegramFailure): number =>
  failure.kind === 'rate_limited' ? failure.retryAfterSeconds * 1000 : FAILURE_PAUSE_MS;

export class TelegramReconciler<C extends ChatMemberReader> {
  /** The passes, while started: at once, every `tickMs`, and when woken (src/wake-loop.ts). */
  private loop: WakeLoop | null = null;
  /**
   * Aborted by stop(): a running pass stops asking at once (a chat's pass may last minutes at the
   * chat's pace), and what it was asking is asked again by the next pass.
   */
  private stopping = new AbortController();
  /** Bots not to compare before this instant (epoch ms, the app clock): after a 429's retry_after, or a failure. */
  private readonly notBefore = new Map<string, number>();
  private readonly pageSize: number;
  private readonly atOnce: number;

  constructor(
    private readonly deps: TelegramReconcilerDeps<C>,
    private readonly options: TelegramReconcilerOptions,
  ) {
    this.pageSize = options.pageSize ?? ASK_PAGE;
    this.atOnce = options.atOnce ?? ASK_AT_ONCE;
  }

  start(): void {
    this.stopping = new AbortController();
    this.loop = new WakeLoop(
      async () => void (await this.runOnce()),
      (err) => this.deps.logger.error({ err }, 'access: Telegram drift repair failed; retried at the next tick'),
      this.options.tickMs,
    );
    this.loop.start();
  }

  /** Looks for due bots now (the worker has just taken a bot, or a resync cleared `reconciled_at`). One pass at a time. */
  wake(): void {
    this.loop?.wake();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    const loop = this.loop;
    this.loop = null;
    await loop?.stop();
  }

  /** Compares every bot held here whose last comparison is older than `everyMs`, one after the other. */
  async runOnce(): Promise<TelegramProjectReport[]> {
    const now = this.deps.clock.now();
    const due = await this.deps.store.due(this.deps.bots.id, now, this.options.everyMs);
    const reports: TelegramProjectReport[] = [];
    for (const { projectId } of due) {
      if (this.stopping.signal.aborted) break;
      if ((this.notBefore.get(projectId) ?? 0) > this.deps.clock.now().getTime()) continue;
      this.notBefore.delete(projectId);
      try {
        const report = await this.deps.bots.withBot(projectId, (bot) => this.reconcileProject(bot));
        if (!report) continue;
        if (report.retryAfterMs !== undefined) this.notBefore.set(projectId, this.deps.clock.now().getTime() + report.retryAfterMs);
        reports.push(report);
      } catch (err) {
        // The store or the planner failed (Telegram's failures are caught where asked, never thrown
        // here): not recorded as compared, tried again at the next tick; the other bots go on.
        this.deps.logger.error({ err, projectId }, 'access: Telegram drift repair of a project failed; tried again at the next tick');
      }
    }
    return reports;
  }

  /** Plans the project again, then compares each of its chats with Telegram, and records when. */
  async reconcileProject(bot: HeldBot<C>): Promise<TelegramProjectReport> {
    const { store, logger } = this.deps;
    const { projectId } = bot;
    // Let go of the bot (another process holds it now), or stopping: the pass ends where it is.
    const signal = AbortSignal.any([bot.signal, this.stopping.signal]);
    await this.deps.planProject(projectId);
    const chats: ChatReport[] = [];
    for (const chat of await store.chats(projectId)) {
      if (signal.aborted) return { projectId, chats, completed: false };
      const { report, halt } = await this.reconcileChat(bot, chat, signal);
      chats.push(report);
      if (halt?.kind === 'stopped') return { projectId, chats, completed: false };
      if (halt?.kind === 'bot') {
        const stoppedBy = { code: halt.failure.code, message: halt.failure.description };
        const retryAfterMs = pauseAfter(halt.failure);
        logger.warn({ projectId, chatId: chat.chatId, error: stoppedBy, retryAfterMs }, 'access: Telegram drift repair stopped for this bot; compared again later');
        return { projectId, chats, completed: false, stoppedBy, retryAfterMs };
      }
      const { remove, joined, left, relink } = report.repairs;
      if (report.error) logger.warn({ projectId, chatId: chat.chatId, error: report.error }, 'access: the bot cannot see the chat; target marked unhealthy');
      else if (remove + joined + left + relink > 0) logger.info({ projectId, chatId: chat.chatId, ...report.repairs, asked: report.asked }, 'access: Telegram drift repaired');
    }
    await store.markReconciled(projectId, this.deps.clock.now());
    return { projectId, chats, completed: true };
  }

  /** Asks about the chat's managed members page by page, repairing each page's drift. */
  private async reconcileChat(bot: HeldBot<C>, chat: ManagedChat, signal: AbortSignal): Promise<{ report: ChatReport; halt?: Halt }> {
    const { store } = this.deps;
    const report: ChatReport = { targetId: chat.targetId, chatId: chat.chatId, asked: 0, pages: 0, repairs: noChatRepairs() };
    // Rows written after this instant are newer than the answers: they are left out of the comparison.
    const seenAt = await store.now();
    let after: string | null = null;
    for (;;) {
      const members = await store.membersToAsk(bot.projectId, chat.targetId, seenAt, after, this.pageSize);
      if (members.length === 0) break;
      const { answers, halt } = await askChatMembers(bot.client, chat.chatId, members, this.atOnce, signal);
      if (halt?.kind === 'stopped') return { report, halt };
      report.pages++;
      report.asked += answers.length;
      // Answers received before a 429 or a failure are still true: they are compared.
      const repairs = await store.repairPage(bot.projectId, chat.targetId, answers, seenAt, this.deps.clock.now());
      for (const k of Object.keys(repairs) as (keyof ChatRepairs)[]) report.repairs[k] += repairs[k];
      if (halt?.kind === 'chat') {
        await store.markChatUnhealthy(bot.projectId, chat.targetId, halt.error);
        return { report: { ...report, error: halt.error } };
      }
      if (halt) return { report, halt };
      if (members.length < this.pageSize) break;
      after = members.at(-1)!;
    }
    // Answered in this chat: the bot sees it (a refusal flagged before is over).
    if (report.asked > 0) await store.clearChatRefusal(bot.projectId, chat.targetId);
    return { report };
  }
}
