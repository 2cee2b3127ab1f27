import { talkOf, type TelegramTalk } from '../../domain/front-desk/telegram-talk.js';
import type { AccessError } from '../../store/access-worker.store.js';
import type { ReceivedUpdate, TelegramBotKey } from '../../store/telegram-updates.store.js';
import type { HeldBot } from '../bot-leases.js';
import type { TelegramClient } from './client.js';
import { makeReplies } from './conversation-calls.js';
import { CallFailed, callTelegram, makeCall, Stop } from './update-calls.js';
import { effectsAfter, eventOf, lookupOf, outcomeOf, planOf, type CallOutcome, type UpdatePlan } from './update-plan.js';
import type { TelegramUpdatesDeps } from './updates.js';

/** A signal no stop aborts: what a started conversation's replies are made with. */
const UNSTOPPED = new AbortController().signal;

/**
 * One stored update of a held bot, handled (updates.ts's loop hands them over in update_id order):
 * a member talking to the bot is answered; any other update has the calls it needs made
 * (update-plan.ts), each harmless to repeat, then its effects written with its handled mark in one
 * transaction. A passing failure or a refused token throws, so the loop handles the same update
 * again later and the order holds; a lost lease throws `Stop`.
 *
 * Nothing here logs a grammY error or the Api (they carry the token): only `telegramFailure`.
 */
export class TelegramUpdateHandler {
  constructor(
    private readonly bot: HeldBot<TelegramClient>,
    /** The lease owner (`integrations.lease_owner`) every write is fenced by. */
    private readonly owner: string,
    private readonly deps: Pick<TelegramUpdatesDeps, 'store' | 'handling' | 'conversation' | 'clock' | 'logger'>,
    /** The loop's signal: aborted when the bot is let go or the loop is stopped. */
    private readonly signal: AbortSignal,
  ) {}

  private get key(): TelegramBotKey {
    return { projectId: this.bot.projectId, botId: this.bot.botId };
  }

  /** One update: read what it is about, make its calls, write its effects with its handled mark. */
  async handle(client: TelegramClient, update: ReceivedUpdate): Promise<void> {
    const { store, clock, logger } = this.deps;
    const talk = talkOf(update.payload);
    if (talk) return this.converse(client, update, talk);
    const event = eventOf(update.payload);
    const lookup = lookupOf(event);
    const context = lookup ? await store.context(this.bot.projectId, lookup.chatId, lookup.userId, lookup.inviteLink) : null;
    const plan = planOf(event, context);
    const { outcomes, fault } = await this.perform(client, plan);
    const effects = effectsAfter(plan, outcomes, fault);
    const result = await this.deps.handling.handled({ owner: this.owner, bot: this.key, now: clock.now(), updateId: update.updateId, effects });
    if (!result.held) throw new Stop();
    const changed = plan.calls.length > 0 || Object.keys(effects).length > 0;
    logger[changed ? 'info' : 'debug'](
      { projectId: this.bot.projectId, updateId: update.updateId, kind: event.kind, calls: plan.calls.map((c) => c.method), outcomes, ...(fault ? { fault } : {}) },
      `telegram updates: ${plan.note}`,
    );
  }

  /**
   * A member talking to the bot: the answer's replies made, then the update marked handled (no
   * access effects). A reply Telegram refuses for good (blocked, chat not found) is logged here,
   * once: the mark means it is never made again.
   */
  private async converse(client: TelegramClient, update: ReceivedUpdate, talk: TelegramTalk): Promise<void> {
    const { clock, logger } = this.deps;
    const { replies, note, warn } = await this.deps.conversation.answer(this.bot.projectId, talk);
    // A started answer is finished even when the loop is stopping: a reply sent but its update left
    // unmarked would be sent again by the next holder. Each call is bounded by the client's timeout.
    const refused = await makeReplies(UNSTOPPED, client, replies);
    const result = await this.deps.handling.handled({ owner: this.owner, bot: this.key, now: clock.now(), updateId: update.updateId, effects: {} });
    if (!result.held) throw new Stop();
    const userId = talk.kind === 'ignored' ? undefined : talk.userId;
    const fields = { projectId: this.bot.projectId, updateId: update.updateId, kind: talk.kind, userId, calls: replies.map((r) => r.method) };
    if (refused.length > 0 && result.handled) {
      logger.warn({ ...fields, refused }, `telegram conversation: ${note}; Telegram refused a reply (not retried: the member blocked the bot, or the chat is gone)`);
    } else {
      logger[warn ? 'warn' : 'debug'](fields, `telegram conversation: ${note}`);
    }
  }

  /**
   * Makes the plan's calls in order. A passing failure or a refused token throws (the update is
   * handled again later); a fault of the chat stops the calls after it; a refused call is noted.
   */
  private async perform(client: TelegramClient, plan: UpdatePlan): Promise<{ outcomes: (CallOutcome | undefined)[]; fault: AccessError | null }> {
    const outcomes: (CallOutcome | undefined)[] = [];
    let fault: AccessError | null = null;
    for (const call of plan.calls) {
      if (fault) {
        outcomes.push(undefined);
        continue;
      }
      try {
        await callTelegram(this.signal, client, call.method, () => makeCall(client, call, this.deps.clock, this.signal));
        outcomes.push('done');
      } catch (err) {
        if (!(err instanceof CallFailed)) throw err;
        const { outcome, error } = outcomeOf(call, err.failure);
        if (outcome === 'retry' || outcome === 'unauthorized') throw err;
        if (outcome === 'fault') fault = error;
        if (outcome === 'refused') {
          this.deps.logger.warn({ projectId: this.bot.projectId, method: call.method, failure: err.failure }, 'telegram updates: a call was refused; the rest of the update is handled');
        }
        outcomes.push(outcome);
      }
    }
    return { outcomes, fault };
  }
}
