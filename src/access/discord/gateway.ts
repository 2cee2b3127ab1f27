import type { REST } from '@discordjs/rest';
import type { WebSocketManager } from '@discordjs/ws';
import { GatewayCloseCodes, GatewayDispatchEvents, GatewayIntentBits, type GatewayDispatchPayload } from 'discord-api-types/v10';
import type { Logger } from 'pino';
import type { HeldBot } from '../bot-leases.js';
import { discordCollection, discordWs, isDiscordApiError } from './discord-libraries.js';
import { GatewayEvents, type MemberSeen } from './gateway-events.js';
import { SettlingShards, sessionStore } from './gateway-shards.js';

/**
 * A gateway connection per Discord bot this process holds (docs/access-discord.md, "The gateway"):
 * `@discordjs/ws`, intents GUILDS | GUILD_MEMBERS, its `GET /gateway/bot` made with the bot's own
 * REST client (TENURE_DISCORD_API_URL, the bot's one budget). The Discord access worker holds every
 * connected bot while the gateway is on, so each bot has one connection across the cluster, opened
 * when its lease is taken and closed when it is let go (taken over, disconnected, stopped).
 *
 * A member joining (GUILD_MEMBER_ADD) or whose roles change (GUILD_MEMBER_UPDATE) is compared like
 * a drift-repair page of one (gateway-events.ts); the worker makes the call. What the connection
 * misses while it is down, drift repair still catches at its next comparison.
 *
 * Refusals: 4004 Authentication failed (and a 401 on `GET /gateway/bot`) flag the bot unhealthy, as
 * a refused REST call does, and nothing reconnects until it is connected again; 4014 Disallowed
 * intent(s) (the Server Members Intent is off in the Developer Portal) is logged once and tried
 * again after DISALLOWED_RETRY_MS or when the bot is connected again. `GET /gateway/bot` failing
 * otherwise (a 5xx, Discord unreachable) is tried again after a growing pause; a connection that
 * drops is the library's to resume or reconnect.
 *
 * `@discordjs/ws` is loaded when the first connection opens (src/lazy-library.ts): a server whose
 * gateway is on but holds no Discord bot does not load it.
 */

export const GATEWAY_INTENTS = GatewayIntentBits.Guilds | GatewayIntentBits.GuildMembers;
/** After 4014: how long until the gateway is tried again (the owner may have switched the intent on). */
export const DISALLOWED_RETRY_MS = 15 * 60_000;
/** Pauses before opening again after `GET /gateway/bot` failed (a 5xx, Discord unreachable), one after the other. */
const PAUSES_MS = [5_000, 30_000, 120_000, 600_000];

/** The bots the Discord access worker holds (its BotLeases). */
export interface GatewayBots {
  held(): HeldBot<REST>[];
  tokenFor(projectId: string): string | null;
  onAcquired(handler: (bots: HeldBot<REST>[]) => void): () => void;
  onLost(handler: (bot: HeldBot<REST>) => void): () => void;
  onReopened(handler: (bot: HeldBot<REST>) => void): () => void;
}

export interface DiscordGatewaysDeps {
  bots: GatewayBots;
  /** Compares the members an event showed with their rows (AccessReconcileStore.repairPage, `seenAt` null). */
  repair(projectId: string, guildId: string, members: readonly MemberSeen[]): Promise<unknown>;
  /** The token was refused: the bot is flagged unhealthy under its lease (AccessWorkerStore.flagRefusedBot). */
  flagRefused(bot: HeldBot<REST>): Promise<void>;
  logger: Logger;
}

export class DiscordGateways {
  private readonly gateways = new Map<string, BotGateway>();
  private readonly unsubscribe: (() => void)[] = [];
  private running = false;

  constructor(private readonly deps: DiscordGatewaysDeps) {}

  /** The projects whose bot has a gateway here now (opening or open). */
  get projects(): string[] {
    return [...this.gateways.keys()];
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const { bots } = this.deps;
    this.unsubscribe.push(
      bots.onAcquired((taken) => taken.forEach((bot) => this.open(bot))),
      bots.onLost((bot) => void this.close(bot.projectId)),
      bots.onReopened((bot) => void this.close(bot.projectId).then(() => this.open(bot))),
    );
    for (const bot of bots.held()) this.open(bot);
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const stop of this.unsubscribe.splice(0)) stop();
    await Promise.all([...this.gateways.keys()].map((projectId) => this.close(projectId)));
  }

  private open(bot: HeldBot<REST>): void {
    if (!this.running || this.gateways.has(bot.projectId)) return;
    const token = this.deps.bots.tokenFor(bot.projectId);
    if (!token) return;
    const gateway = new BotGateway(bot, token, this.deps);
    this.gateways.set(bot.projectId, gateway);
    gateway.connect();
  }

  private async close(projectId: string): Promise<void> {
    const gateway = this.gateways.get(projectId);
    if (!gateway) return;
    this.gateways.delete(projectId);
    await gateway.destroy();
  }
}

/** One bot's connection: the library's manager (its shards), rebuilt after a pause when it could not start. */
class BotGateway {
  private manager: WebSocketManager | null = null;
  private readonly events: GatewayEvents;
  private readonly log: Logger;
  private destroyed = false;
  private pauses = 0;
  private timer: NodeJS.Timeout | null = null;
  private readyOnce = false;

  constructor(
    private readonly bot: HeldBot<REST>,
    private readonly token: string,
    private readonly deps: DiscordGatewaysDeps,
  ) {
    this.log = deps.logger.child({ projectId: bot.projectId, botId: bot.botId });
    this.events = new GatewayEvents(bot.projectId, deps.repair, this.log);
  }

  /** Opens the connection, once the library is loaded; destroyed meanwhile, it opens nothing. */
  connect(): void {
    if (this.destroyed) return;
    // A failure (the library would not load, the manager would not build) is logged, never left unhandled.
    Promise.all([discordWs.load(), discordCollection.load()])
      .then(() => this.open())
      .catch((err: unknown) => this.log.error({ err }, 'access: the Discord gateway could not be opened; it stays closed until the bot is taken again'));
  }

  private open(): void {
    if (this.destroyed) return;
    const { WebSocketManager, WebSocketShardEvents } = discordWs.get();
    const manager = new WebSocketManager({
      token: this.token,
      intents: GATEWAY_INTENTS,
      rest: this.bot.client,
      ...sessionStore(),
      buildStrategy: (m) => new SettlingShards(m),
    });
    this.manager = manager;
    manager.on(WebSocketShardEvents.Dispatch, (payload) => this.dispatch(payload));
    manager.on(WebSocketShardEvents.Ready, (_data, shardId) => this.ready(shardId));
    manager.on(WebSocketShardEvents.Closed, (code) => void this.closed(manager, code));
    // The library reports 4004/4014 as errors too (after `closed`, handled there); without a listener they would throw.
    manager.on(WebSocketShardEvents.Error, (err, shardId) => this.log.debug({ err: err.message, shardId }, 'access: Discord gateway error'));
    manager.connect().catch((err: unknown) => void this.failedToStart(manager, err));
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const manager = this.manager;
    this.manager = null;
    if (manager) await destroyQuietly(manager);
    await this.events.idle();
  }

  private dispatch(payload: GatewayDispatchPayload): void {
    if (payload.t === GatewayDispatchEvents.GuildMemberAdd || payload.t === GatewayDispatchEvents.GuildMemberUpdate) {
      const { guild_id: guildId, user, roles } = payload.d;
      if (user) this.events.heard(guildId, { id: user.id, roles });
    }
  }

  private ready(shardId: number): void {
    this.pauses = 0;
    if (!this.readyOnce) this.log.info({ shardId }, 'access: Discord gateway connected; members joining get their roles at once');
    this.readyOnce = true;
  }

  private async closed(manager: WebSocketManager, code: number): Promise<void> {
    if (this.destroyed || manager !== this.manager) return;
    if (code === GatewayCloseCodes.AuthenticationFailed) return this.refused(manager);
    if (code === GatewayCloseCodes.DisallowedIntents) {
      this.log.warn(
        { code },
        "access: Discord refused the gateway's GUILD_MEMBERS intent (4014 Disallowed intent(s)): switch on the Server Members Intent (Developer Portal → Bot → Privileged Gateway Intents); members joining wait for drift repair meanwhile",
      );
      return this.rebuildAfter(manager, DISALLOWED_RETRY_MS);
    }
    // Anything else the library resumes or reconnects by itself. Tearing the manager down here
    // instead would race that reconnect (it runs after this handler) and could leave a shard
    // connecting that nothing closes.
  }

  private async failedToStart(manager: WebSocketManager, err: unknown): Promise<void> {
    if (this.destroyed || manager !== this.manager) return;
    if (isDiscordApiError(err) && err.status === 401) return this.refused(manager);
    const pause = PAUSES_MS[Math.min(this.pauses++, PAUSES_MS.length - 1)]!;
    this.log.warn({ err: err instanceof Error ? err.message : String(err), pauseMs: pause }, 'access: the Discord gateway could not be opened; trying again after a pause');
    await this.rebuildAfter(manager, pause);
  }

  /** The token was refused: flagged once, and the connection stays closed (no reconnect loop). */
  private async refused(manager: WebSocketManager): Promise<void> {
    this.manager = null;
    await destroyQuietly(manager);
    this.log.error({ code: GatewayCloseCodes.AuthenticationFailed }, 'access: Discord refused the bot token at the gateway; the bot is flagged unhealthy until it is connected again');
    await this.deps.flagRefused(this.bot).catch((err: unknown) => this.log.error({ err }, 'access: flagging the refused bot failed'));
  }

  private async rebuildAfter(manager: WebSocketManager, pauseMs: number): Promise<void> {
    this.manager = null;
    await destroyQuietly(manager);
    if (this.destroyed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, pauseMs);
    this.timer.unref();
  }
}

/** Closes the manager's shards; a failure to close a socket that is going anyway is not worth a log. */
async function destroyQuietly(manager: WebSocketManager): Promise<void> {
  try {
    await manager.destroy();
  } catch {
    // The sockets are gone either way.
  }
}
