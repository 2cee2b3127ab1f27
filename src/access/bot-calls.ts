import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { countAccessCall } from '../observability/access-calls.js';
import { accessKey, type AccessWorkerStore, type ClaimedAccess } from '../store/access-worker.store.js';
import type { BotLeases, HeldBot } from './bot-leases.js';
import { guildOf, type BotWork, type Call } from './bot-work.js';
import { completionOf } from './completion-recorder.js';
import type { CallResult, PlatformConnector } from './connector.js';

/**
 * The access worker's claim-and-call chain for one bot it holds (access.worker.ts runs it for each):
 * rows claimed a little ahead of the calls (`fill`), calls started while the bot has room (`pump`),
 * each outcome handed to the bot's CompletionRecorder, and what an answer means for the bot's next
 * calls (a target blamed, a chat held back, a token refused). The bot's state is its BotWork.
 */

/** Rows of one target in hand at most: one call out, the next ones ready behind it. */
const PER_TARGET_IN_HAND = 4;
/** Rows claimed ahead, per call slot, at most. */
const BUFFER_PER_SLOT = 4;
/**
 * Calls out plus answers not written yet, per call slot, at most: when the writes fall behind
 * (a slow database, a starved machine) the calls wait for them, so a crash makes at most
 * 2 × concurrency calls a second time, however far behind the writes were.
 */
const UNWRITTEN_PER_SLOT = 2;

/** What the calls need of the access worker's store, platform and clocks (AccessWorkerDeps). */
export interface BotCallsDeps<C> {
  store: Pick<AccessWorkerStore, 'claim'>;
  connector: PlatformConnector<C>;
  clock: Clock;
  random: () => number;
  logger: Logger;
}

/** What the calls need of the worker running them. */
export interface BotCallsWorker<C> {
  /** The bots held here, and this process's lease owner id. */
  readonly leases: BotLeases<C>;
  /** True while the worker stops: calls out may finish, no new one starts. */
  stopping(): boolean;
  /** A call finished or a guild has room: the worker's loop claims again. */
  nudge(): void;
  /** After a 401, once the bot's calls are written: its lease is given back. */
  retire(bot: HeldBot<C>, work: BotWork): Promise<void>;
}

export class BotCalls<C> {
  constructor(
    private readonly deps: BotCallsDeps<C>,
    private readonly options: { concurrency: number; leaseMs: number },
    private readonly worker: BotCallsWorker<C>,
  ) {}

  /**
   * Claims for one bot when fewer calls could start now than it may have out: up to
   * `BUFFER_PER_SLOT` rows a slot in hand, at most `PER_TARGET_IN_HAND` of one target (one call
   * out, the next ones ready), none in a guild whose bucket is empty.
   */
  async fill(bot: HeldBot<C>, work: BotWork): Promise<number> {
    const { concurrency } = this.options;
    const now = Date.now();
    if (work.claiming || work.unauthorized || this.worker.stopping() || bot.signal.aborted || work.ready(now) >= concurrency) return 0;
    const limit = BUFFER_PER_SLOT * concurrency - work.bufferedWithRoom(now);
    // A claim of a row or two costs a statement as one of a round does: with rows still buffered,
    // wait for room for a round (on embedded storage a claim per call halved a burst's rate).
    if (limit <= 0 || (limit < concurrency && work.buffer.length > 0)) return 0;
    work.claiming = true;
    const claim = ++work.claims;
    const at = this.deps.clock.now();
    let rows: ClaimedAccess[];
    try {
      rows = await this.deps.store.claim({
        owner: this.worker.leases.id,
        key: bot.key,
        now: at,
        until: new Date(at.getTime() + this.options.leaseMs),
        limit,
        perTarget: PER_TARGET_IN_HAND,
        fill: true,
        inHand: work.inHand(),
        skipGuilds: work.limitedNow(now),
      });
    } finally {
      work.claiming = false;
    }
    work.claimEnded(claim);
    // Let go meanwhile: the rows fall due again when their claim runs out, for the next holder.
    if (bot.signal.aborted) return 0;
    work.buffer.push(...rows);
    this.pump(bot, work);
    return rows.length;
  }

  /** Starts calls from the buffer while the bot has room (BotWork.take says which). */
  pump(bot: HeldBot<C>, work: BotWork): void {
    if (this.worker.stopping() || bot.signal.aborted || work.unauthorized || !this.worker.leases.get(bot.projectId)) return;
    const now = Date.now();
    const { concurrency } = this.options;
    const room = Math.min(concurrency - work.active(now), UNWRITTEN_PER_SLOT * concurrency - work.calls.size - work.recorder.unwritten);
    if (room <= 0) return;
    for (const row of work.take(room, now)) this.call(bot, work, row);
  }

  private call(bot: HeldBot<C>, work: BotWork, row: ClaimedAccess): void {
    const controller = new AbortController();
    const { connector } = this.deps;
    const call: Call = {
      row,
      path: connector.pathOf(row),
      controller,
      waitingUntil: 0,
      promise: connector
        .apply(bot.client, row, controller.signal, bot)
        .then((result) => this.settle(bot, work, row, result))
        .catch((err: unknown) => this.deps.logger.error({ err, projectId: bot.projectId }, 'access: handling a call outcome failed')),
    };
    work.calls.set(accessKey(row.targetId, row.userId), call);
  }

  private settle(bot: HeldBot<C>, work: BotWork, row: ClaimedAccess, result: CallResult): void {
    work.calls.delete(accessKey(row.targetId, row.userId));
    if (result.outcome === 'aborted') {
      work.abandoned.push(row);
      return;
    }
    if (result.outcome !== 'unchanged') countAccessCall(result.outcome === 'applied' ? row.desired : result.outcome);
    // The platform said when to come back (Telegram's 429): nothing more in that chat until then.
    if (result.outcome === 'retry' && result.retryAfterMs !== undefined) work.holdBack(guildOf(row), Date.now() + result.retryAfterMs);
    const targetFault = result.outcome === 'failed' && result.targetFault;
    if (targetFault) work.faulted.set(row.targetId, Number.POSITIVE_INFINITY);
    if (result.outcome === 'unauthorized' && !work.unauthorized) {
      work.unauthorized = true;
      work.abandoned.push(...work.buffer);
      work.buffer = [];
      this.deps.logger.error(
        { projectId: bot.projectId, botId: bot.botId },
        `access: ${this.deps.connector.label} refused the bot token (401); no more calls for this bot until it is reconnected`,
      );
    }
    const write = work.recorder
      .record(completionOf(row, result, this.deps.clock.now(), this.deps.random))
      .then((recorded) => {
        if (targetFault) {
          work.faulted.set(row.targetId, work.claims + 1);
          this.deps.logger.warn({ projectId: bot.projectId, targetId: row.targetId, error: 'error' in result ? result.error : null, cascaded: recorded.cascaded }, 'access: a target is unhealthy; its rows failed');
        }
        if (!recorded.held) this.deps.logger.warn({ projectId: bot.projectId }, 'access: call outcomes not written: the bot is held by another worker now');
      })
      .catch((err: unknown) => {
        // The row keeps its claim and falls due again when the claim runs out (at least once).
        this.deps.logger.error({ err, projectId: bot.projectId }, 'access: writing call outcomes failed; the rows are tried again');
      });
    work.writes.add(write);
    void write.finally(() => {
      work.writes.delete(write);
      if (work.unauthorized && work.calls.size === 0 && work.writes.size === 0) void this.worker.retire(bot, work);
      // Calls held back for the writes to catch up start now.
      else this.pump(bot, work);
    });
    this.pump(bot, work);
    if (work.ready(Date.now()) < this.options.concurrency) this.worker.nudge();
  }
}
