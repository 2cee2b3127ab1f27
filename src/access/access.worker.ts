import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { AccessWorkerStore } from '../store/access-worker.store.js';
import type { BotLeasesStore } from '../store/bot-leases.store.js';
import { Alarm } from '../wake-loop.js';
import { BotLeases, type HeldBot } from './bot-leases.js';
import { BotCalls } from './bot-calls.js';
import { BotWork } from './bot-work.js';
import { CompletionRecorder, type CompletionWriter } from './completion-recorder.js';
import type { PlatformConnector } from './connector.js';

/**
 * The access worker (docs/access-discord.md, "How tenure calls Discord"; src/access/README.md): applies
 * pending access rows of one platform (its connector: Discord, Telegram), one call per row, for the
 * bots this process holds the lease of (BotLeases: one process per bot, so the bot's calls share
 * one rate-limit budget).
 *
 * Per bot: up to `concurrency` calls in flight, handed to the bot's one REST client, which queues
 * them per rate-limit bucket and under the global limit and waits out 429s itself; at most one
 * call per target at a time, so an error that blames the target (50013 Missing Permissions, 10011
 * Unknown Role…) is known before its next call is made: a broken target costs one invalid
 * request, not a burst of them (10,000 invalid requests in 10 minutes get a bot banned). Rows are
 * claimed a little ahead of the calls, and outcomes written in batches (CompletionRecorder); calls
 * out plus answers not written stay under 2 × `concurrency`, which bounds what a crash repeats.
 * That claim-and-call chain of one bot is BotCalls (bot-calls.ts); this file is the loop around it.
 *
 * It sleeps until woken — by the `access` wake-up (the planner's and drift repair's writes, in any
 * process), a call finishing, or the next retry falling due — never longer than `pollMs`, which
 * also takes over the bots of a process that died once their leases run out.
 */

export interface AccessWorkerOptions {
  /** Calls in flight per bot (TENURE_ACCESS_CONCURRENCY). */
  concurrency: number;
  /** A bot's lease, renewed every third of it; a dead process's bots are taken over after it. */
  leaseMs: number;
  pollMs: number;
  /** Bots this process holds at most. */
  maxBots: number;
  /** Also take bots whose drift repair is due (TENURE_ACCESS_RECONCILE_SECONDS); null: only bots with due rows. */
  reconcileEveryMs: number | null;
}

export const DEFAULT_ACCESS_WORKER_OPTIONS = { leaseMs: 30_000, pollMs: 5_000, maxBots: 100 } as const;

export interface AccessWorkerDeps<C> {
  /** Claims of due rows, and when the next one is due. */
  store: Pick<AccessWorkerStore, 'claim' | 'nextDueAt'>;
  /** Records the calls' outcomes, a batch a transaction (src/domain/access/access-completions.ts). */
  completions: CompletionWriter;
  /** The bots' leases (one holder per bot). */
  leases: BotLeasesStore;
  /** Opens a sealed bot token (the instance's secret box). */
  openToken(sealed: string): string;
  /** The platform: its clients, and what one row's call is there. */
  connector: PlatformConnector<C>;
  clock: Clock;
  random: () => number;
  logger: Logger;
}

export class AccessWorker<C = unknown> {
  readonly leases: BotLeases<C>;
  private readonly work = new Map<string, BotWork>();
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private acquireWanted = true;
  private lastAcquireAt = 0;
  private readonly alarm = new Alarm();
  /** Set while stopping: calls out may finish, no new one starts. */
  private stopping = false;
  private readonly botCalls: BotCalls<C>;

  constructor(
    private readonly deps: AccessWorkerDeps<C>,
    private readonly options: AccessWorkerOptions,
  ) {
    const { leases, openToken, connector, clock, logger } = deps;
    this.leases = new BotLeases<C>(
      { store: leases, openToken, loadClients: () => connector.load(), createClient: (token, bot) => connector.createClient(token, bot), closeClient: (client) => connector.closeClient(client), clock, logger },
      {
        platform: connector.platform,
        holdAlways: connector.holdAlways,
        leaseMs: options.leaseMs,
        maxBots: options.maxBots,
        reconcileEveryMs: options.reconcileEveryMs,
      },
    );
    // A bot let go (taken over, disconnected, its lease run out): its calls here stop at once.
    this.leases.onLost((bot) => {
      const work = this.work.get(bot.projectId);
      this.work.delete(bot.projectId);
      if (!work) return;
      work.close();
      for (const call of work.calls.values()) call.controller.abort();
    });
    this.botCalls = new BotCalls<C>(deps, options, {
      leases: this.leases,
      stopping: () => this.stopping,
      nudge: () => this.nudge(),
      retire: (bot, work) => this.retire(bot, work),
    });
  }

  /** The lease owner id of this process (`integrations.lease_owner`). */
  get id(): string {
    return this.leases.id;
  }

  /** `sleeping`: idle until woken or the next retry is due. */
  get state(): 'stopped' | 'working' | 'sleeping' {
    if (!this.running) return 'stopped';
    return this.alarm.sleeping ? 'sleeping' : 'working';
  }

  /** The platform this worker calls. */
  get platform(): PlatformConnector<C>['platform'] {
    return this.deps.connector.platform;
  }

  /** Calls out to the platform from this process. */
  get inFlight(): number {
    let n = 0;
    for (const w of this.work.values()) n += w.calls.size;
    return n;
  }

  /** The client of a bot held here (drift repair's `HeldBots`), or null. */
  clientFor(projectId: string): C | null {
    return this.leases.clientFor(projectId);
  }

  /** Runs `work` with a bot held here (null if it is not); `bot.signal` aborts if the bot is let go meanwhile. */
  withBot<T>(projectId: string, work: (bot: HeldBot<C>) => Promise<T>): Promise<T | null> {
    return this.leases.withBot(projectId, work);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.leases.start();
    this.loopDone = this.loop();
  }

  /** Rows may be due: the `access` wake-up (a commit of access rows, here or elsewhere). */
  wake(): void {
    this.acquireWanted = true;
    this.nudge();
  }

  /**
   * Takes bots, claims and calls until nothing is due and nothing is in flight; returns the rows
   * claimed. For tests and one-off runs; not while the loop runs. Rows retried later are left.
   */
  async drain(): Promise<number> {
    let total = 0;
    this.acquireWanted = true;
    for (;;) {
      const claimed = await this.tick();
      const out = [...this.work.values()].flatMap((w) => [...[...w.calls.values()].map((c) => c.promise), ...w.writes]);
      if (claimed === 0 && out.length === 0 && [...this.work.values()].every((w) => w.buffer.length === 0)) return total;
      total += claimed;
      // Nothing out yet rows buffered: their guilds wait for a bucket; look again shortly.
      await (out.length > 0 ? Promise.race(out) : new Promise((resolve) => setTimeout(resolve, 10)));
    }
  }

  /**
   * Stops claiming, lets calls in flight finish for up to `graceMs`, then aborts the rest, writes
   * what finished, and gives every lease back, with the rows claimed but not called due at once.
   */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.running && this.work.size === 0 && this.leases.size === 0) return;
    this.running = false;
    this.stopping = true;
    this.nudge();
    await this.loopDone;
    for (const w of this.work.values()) w.close();
    const calls = () => [...this.work.values()].flatMap((w) => [...w.calls.values()]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(calls().map((c) => c.promise)), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const call of calls()) call.controller.abort();
    await Promise.allSettled(calls().map((c) => c.promise));
    const works = [...this.work.entries()];
    await Promise.allSettled(works.flatMap(([, w]) => [...w.writes]));
    const abandoned = works.flatMap(([projectId, w]) =>
      [...w.buffer, ...w.abandoned].map((r) => ({ projectId, targetId: r.targetId, userId: r.userId })),
    );
    try {
      await this.leases.release(
        this.leases.held().map((b) => b.projectId),
        abandoned,
      );
    } catch (err) {
      this.deps.logger.warn({ err }, 'access: could not give back bot leases; they run out on their own');
    }
    this.work.clear();
    await this.leases.stop();
    this.stopping = false;
  }

  private nudge(): void {
    this.alarm.ring();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.alarm.reset();
      try {
        await this.tick();
        failures = 0;
      } catch (err) {
        failures++;
        this.deps.logger.error({ err }, 'access: claiming access rows failed');
        await this.alarm.sleep(Math.min(30_000, 250 * 2 ** failures));
        continue;
      }
      if (!this.running || this.alarm.rang) continue;
      let delay: number = this.options.pollMs;
      try {
        delay = await this.idleDelay();
      } catch (err) {
        this.deps.logger.error({ err }, 'access: reading the next access row due failed');
      }
      await this.alarm.sleep(delay);
    }
  }

  /** Takes bots with work (when woken, or once per poll), then claims for every bot held; returns the rows claimed. */
  private async tick(): Promise<number> {
    const now = this.deps.clock.now().getTime();
    if (this.acquireWanted || now - this.lastAcquireAt >= this.options.pollMs) {
      this.acquireWanted = false;
      this.lastAcquireAt = now;
      await this.leases.acquire();
    }
    let claimed = 0;
    for (const bot of this.leases.held()) claimed += await this.botCalls.fill(bot, this.workOf(bot));
    return claimed;
  }

  private workOf(bot: HeldBot<C>): BotWork {
    let work = this.work.get(bot.projectId);
    if (!work) this.work.set(bot.projectId, (work = new BotWork(new CompletionRecorder(this.deps.completions, this.id, bot.key, this.deps.clock))));
    // The client's bucket waits (listened to once per client; a reconnection swaps it): a call
    // held back for a bucket frees its slot, and when the guild has room its rows go out again.
    const { connector } = this.deps;
    const client = bot.client as object;
    work.watch(client, connector.onBucketWait && ((listener) => connector.onBucketWait?.(bot.client, listener)), () => {
      if (this.work.get(bot.projectId) !== work) return;
      this.botCalls.pump(bot, work);
      this.nudge();
    });
    return work;
  }

  /** How long to sleep when nothing was claimable: until the next retry falls due, capped by pollMs. */
  private async idleDelay(): Promise<number> {
    if (this.leases.size === 0) return this.options.pollMs;
    const next = await this.deps.store.nextDueAt(this.id, this.deps.connector.platform);
    if (!next) return this.options.pollMs;
    const wait = next.getTime() - this.deps.clock.now().getTime();
    // Due yet not claimed: its bot has a round of calls queued already; a finishing call wakes us.
    return wait <= 0 ? Math.min(this.options.pollMs, 250) : Math.min(wait, this.options.pollMs);
  }

  /** After a 401, once its calls are written: the bot's lease is given back (it is unhealthy now, so nobody takes it until reconnected). */
  private async retire(bot: HeldBot<C>, work: BotWork): Promise<void> {
    if (this.work.get(bot.projectId) !== work) return;
    this.work.delete(bot.projectId);
    const abandoned = work.abandoned.map((r) => ({ projectId: bot.projectId, targetId: r.targetId, userId: r.userId }));
    await this.leases.release([bot.projectId], abandoned).catch((err: unknown) => {
      this.deps.logger.warn({ err, projectId: bot.projectId }, 'access: could not give back the lease of a refused bot; it runs out on its own');
    });
  }
}
