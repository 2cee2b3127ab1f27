import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { Platform } from '../domain/targets/target.view.js';
import type { BotLeasesStore, IntegrationKey, LeasedIntegration } from '../store/bot-leases.store.js';
import type { BotIdentity } from './connector.js';

/**
 * The bots of one platform this process holds (one budget per bot: only the lease holder calls a
 * bot's API), each with its one client (a Discord REST client, a Telegram Bot API client). Leases are taken for bots with work (src/store/bot-leases.store.ts),
 * renewed every third of their length, and a bot is let go at once when a renewal does not return
 * it (taken over, disconnected, flagged unhealthy) or when its lease runs out on this process's
 * clock before a renewal could be written: its `signal` aborts, and whoever does work with it stops.
 *
 * The access worker claims and applies rows with these bots; drift repair (src/access/reconciler.ts)
 * lists guild members with the same clients, through `clientFor` or `withBot`, so its calls wait in
 * the same rate-limit queues.
 */

export interface HeldBot<C = unknown> extends BotIdentity {
  readonly key: IntegrationKey;
  readonly projectId: string;
  botId: string;
  /** The integration's generation the token was opened at (a reconnection bumps it). */
  generation: number;
  client: C;
  leaseExpiresAt: Date;
  /** Aborted when this process lets the bot go. */
  readonly signal: AbortSignal;
}

interface Held<C> extends HeldBot<C> {
  readonly controller: AbortController;
  sealed: string;
}

export interface BotLeasesDeps<C> {
  store: BotLeasesStore;
  /** Opens a sealed bot token (the instance's secret box). */
  openToken(sealed: string): string;
  /** Loads what `createClient` needs (the connector's client library), awaited before the first bot is adopted. */
  loadClients(): Promise<void>;
  /** The client of one bot (the platform connector's). */
  createClient(token: string, bot: BotIdentity): C;
  closeClient(client: C): void;
  clock: Clock;
  logger: Logger;
}

export interface BotLeasesOptions {
  platform: Platform;
  /** Hold every healthy connected bot, not only those with work (Telegram: the holder receives the updates). */
  holdAlways: boolean;
  leaseMs: number;
  /** Bots held at most (the rest are left to other processes). */
  maxBots: number;
  /** Take bots whose drift repair is due too (null: only bots with due rows). */
  reconcileEveryMs: number | null;
}

/** How long a bot whose token this process could not open is left to other processes. */
const UNOPENABLE_PAUSE_MS = 10 * 60_000;

export type LostReason = 'lost' | 'expired' | 'released';

export class BotLeases<C = unknown> {
  /** The lease owner written in `integrations.lease_owner`. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly bots = new Map<string, Held<C>>();
  private readonly unopenable = new Map<string, number>();
  private readonly lostHandlers = new Set<(bot: HeldBot<C>, reason: LostReason) => void>();
  private readonly acquiredHandlers = new Set<(bots: HeldBot<C>[]) => void>();
  private readonly reopenedHandlers = new Set<(bot: HeldBot<C>) => void>();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: BotLeasesDeps<C>,
    readonly options: BotLeasesOptions,
  ) {}

  get size(): number {
    return this.bots.size;
  }

  /** The bots held now (those whose lease ran out on this clock are let go first). */
  held(): HeldBot<C>[] {
    this.expireLocally();
    return [...this.bots.values()];
  }

  /** The bot of `projectId` if this process holds it now. */
  get(projectId: string): HeldBot<C> | null {
    const bot = this.bots.get(projectId);
    if (!bot) return null;
    if (this.deps.clock.now() >= bot.leaseExpiresAt) {
      this.lose(bot, 'expired');
      return null;
    }
    return bot;
  }

  /** The client of a bot held here, or null (drift repair's `HeldBots`). */
  clientFor(projectId: string): C | null {
    return this.get(projectId)?.client ?? null;
  }

  /** Runs `work` with the bot of `projectId` if it is held here (null otherwise); `bot.signal` aborts if it is let go meanwhile. */
  async withBot<T>(projectId: string, work: (bot: HeldBot<C>) => Promise<T>): Promise<T | null> {
    const bot = this.get(projectId);
    return bot ? work(bot) : null;
  }

  onLost(handler: (bot: HeldBot<C>, reason: LostReason) => void): () => void {
    this.lostHandlers.add(handler);
    return () => this.lostHandlers.delete(handler);
  }

  /** Called with the bots each `acquire` took (drift repair looks at them at once). */
  onAcquired(handler: (bots: HeldBot<C>[]) => void): () => void {
    this.acquiredHandlers.add(handler);
    return () => this.acquiredHandlers.delete(handler);
  }

  /** Called when a held bot was reconnected: its client (and token) are new (the Discord gateway opens again with them). */
  onReopened(handler: (bot: HeldBot<C>) => void): () => void {
    this.reopenedHandlers.add(handler);
    return () => this.reopenedHandlers.delete(handler);
  }

  /**
   * The token of a bot held here, opened again from its sealed form (null when not held): for a
   * connection that takes the token itself (the Discord gateway's Identify). Never logged or kept
   * beyond the client it is handed to.
   */
  tokenFor(projectId: string): string | null {
    const bot = this.get(projectId) ? this.bots.get(projectId) : undefined;
    return bot ? this.deps.openToken(bot.sealed) : null;
  }

  /** Starts renewing the leases held, every third of their length. */
  start(): void {
    if (this.timer) return;
    const every = Math.max(1, Math.floor(this.options.leaseMs / 3));
    this.timer = setInterval(() => void (this.renewing = this.renew()), every);
    this.timer.unref();
  }

  /** Takes bots with work (every connected one with `holdAlways`), up to `maxBots` held; returns the new ones. */
  async acquire(): Promise<HeldBot<C>[]> {
    const room = this.options.maxBots - this.held().length;
    if (room <= 0) return [];
    const now = this.deps.clock.now();
    for (const [projectId, until] of this.unopenable) if (until <= now.getTime()) this.unopenable.delete(projectId);
    const leased = await this.deps.store.acquire({
      owner: this.id,
      platform: this.options.platform,
      all: this.options.holdAlways,
      now,
      until: new Date(now.getTime() + this.options.leaseMs),
      limit: room,
      reconcileEveryMs: this.options.reconcileEveryMs,
      skip: [...this.unopenable.keys(), ...this.bots.keys()],
    });
    if (leased.length > 0) {
      try {
        await this.deps.loadClients();
      } catch (err) {
        // The library would not load (a broken install): the leases go back at once for another process.
        await this.deps.store.release(this.id, leased, this.deps.clock.now()).catch(() => undefined);
        throw err;
      }
    }
    const taken: HeldBot<C>[] = [];
    for (const lease of leased) {
      const bot = this.adopt(lease);
      if (bot) taken.push(bot);
    }
    const refused = leased.filter((l) => !this.bots.has(l.projectId));
    if (refused.length > 0) await this.deps.store.release(this.id, refused, this.deps.clock.now());
    if (taken.length > 0) {
      this.deps.logger.info({ projects: taken.map((b) => b.projectId) }, 'access: took the leases of bots with work');
      for (const handler of this.acquiredHandlers) handler(taken);
    }
    return taken;
  }

  /** Extends every lease held; a bot not renewed is let go at once. */
  async renew(): Promise<void> {
    const held = this.held();
    if (held.length === 0) return;
    const now = this.deps.clock.now();
    let renewed: LeasedIntegration[];
    try {
      renewed = await this.deps.store.renew(this.id, held.map((b) => b.key), now, new Date(now.getTime() + this.options.leaseMs));
    } catch (err) {
      // The leases run out on their own if this keeps failing; `held()` lets them go then.
      this.deps.logger.error({ err }, 'access: renewing bot leases failed');
      return;
    }
    const byProject = new Map(renewed.map((r) => [r.projectId, r]));
    for (const bot of held) {
      const lease = byProject.get(bot.projectId);
      const current = this.bots.get(bot.projectId);
      if (!current) continue;
      if (!lease) {
        this.lose(current, 'lost');
        continue;
      }
      current.leaseExpiresAt = lease.leaseExpiresAt;
      if (lease.generation !== current.generation || lease.botTokenSealed !== current.sealed) this.reopen(current, lease);
    }
  }

  /** Gives back leases (with rows claimed and not finished, due again at once) and lets the bots go here. */
  async release(projectIds: readonly string[], abandoned: readonly { projectId: string; targetId: string; userId: string }[] = []): Promise<void> {
    const bots = projectIds.map((id) => this.bots.get(id)).filter((b): b is Held<C> => b !== undefined);
    for (const bot of bots) this.lose(bot, 'released');
    if (bots.length === 0) return;
    await this.deps.store.release(this.id, bots.map((b) => b.key), this.deps.clock.now(), abandoned);
  }

  /** Stops renewing (after the caller has released what it holds). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
  }

  private adopt(lease: LeasedIntegration): Held<C> | null {
    let token: string;
    try {
      token = this.deps.openToken(lease.botTokenSealed);
    } catch (err) {
      // Sealed under another key (a node with another TENURE_ENCRYPTION_KEY?): leave the bot to the
      // others for a while rather than flag it for everyone.
      this.unopenable.set(lease.projectId, this.deps.clock.now().getTime() + UNOPENABLE_PAUSE_MS);
      this.deps.logger.error({ err, projectId: lease.projectId }, "access: the bot token cannot be opened with this instance's encryption key; left to other workers");
      return null;
    }
    const controller = new AbortController();
    const bot: Held<C> = {
      key: { projectId: lease.projectId, platform: lease.platform },
      projectId: lease.projectId,
      botId: lease.botId,
      generation: lease.generation,
      client: this.deps.createClient(token, { projectId: lease.projectId, botId: lease.botId }),
      leaseExpiresAt: lease.leaseExpiresAt,
      signal: controller.signal,
      controller,
      sealed: lease.botTokenSealed,
    };
    this.bots.set(lease.projectId, bot);
    return bot;
  }

  /** The bot was reconnected (a new token, maybe a new bot): later calls use a client with the new token. */
  private reopen(bot: Held<C>, lease: LeasedIntegration): void {
    try {
      const client = this.deps.createClient(this.deps.openToken(lease.botTokenSealed), { projectId: bot.projectId, botId: lease.botId });
      this.deps.closeClient(bot.client);
      bot.client = client;
      bot.botId = lease.botId;
      bot.generation = lease.generation;
      bot.sealed = lease.botTokenSealed;
      this.deps.logger.info({ projectId: bot.projectId, generation: lease.generation }, 'access: the bot was reconnected; using its new token');
      for (const handler of this.reopenedHandlers) handler(bot);
    } catch (err) {
      this.deps.logger.error({ err, projectId: bot.projectId }, 'access: the reconnected bot token cannot be opened; letting the bot go');
      void this.release([bot.projectId]).catch(() => undefined);
    }
  }

  private expireLocally(): void {
    const now = this.deps.clock.now();
    for (const bot of [...this.bots.values()]) if (now >= bot.leaseExpiresAt) this.lose(bot, 'expired');
  }

  private lose(bot: Held<C>, reason: LostReason): void {
    if (this.bots.get(bot.projectId) !== bot) return;
    this.bots.delete(bot.projectId);
    bot.controller.abort();
    this.deps.closeClient(bot.client);
    if (reason !== 'released') this.deps.logger.warn({ projectId: bot.projectId, reason }, "access: lost a bot's lease; its calls here stop");
    for (const handler of this.lostHandlers) handler(bot, reason);
  }
}
