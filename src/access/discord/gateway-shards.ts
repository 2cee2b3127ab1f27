import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection } from '@discordjs/collection';
import type { IShardingStrategy, SessionInfo, WebSocketManager, WebSocketShard, WebSocketShardDestroyOptions, WebSocketShardStatus } from '@discordjs/ws';
import type { GatewaySendPayload } from 'discord-api-types/v10';
import { discordCollection, discordWs } from './discord-libraries.js';

/**
 * The library's simple sharding strategy (every shard in this process), with a stop that is safe
 * whenever it comes. A shard of @discordjs/ws 2.0 destroyed while it waits for Hello or READY
 * starts a second destroy of its own (the wait is aborted, and it recovers by reconnecting), which
 * drops the first one's close handler: the first never returns, and the shard connects again with
 * nobody holding it. So a shard being connected is let finish first (Discord answers in well
 * under a second; at most SETTLE_MS), and a shard that reconnects anyway after its stop (a
 * recovery already under way) is closed again as soon as it is ready. A bot released must not
 * keep a connection: its next holder opens one.
 *
 * Built by a manager of `@discordjs/ws`, so the library (and `@discordjs/collection`) is loaded by
 * then (gateway.ts loads both before it opens).
 */

const SETTLE_MS = 5_000;

export class SettlingShards implements IShardingStrategy {
  private readonly shards = new Map<number, WebSocketShard>();

  constructor(private readonly manager: WebSocketManager) {}

  async spawn(shardIds: number[]): Promise<void> {
    const { managerToFetchingStrategyOptions, SimpleContextFetchingStrategy, WebSocketShard, WebSocketShardEvents } = discordWs.get();
    const options = await managerToFetchingStrategyOptions(this.manager);
    const emit = this.manager.emit.bind(this.manager) as (event: string, ...args: unknown[]) => boolean;
    for (const shardId of shardIds) {
      const shard = new WebSocketShard(new SimpleContextFetchingStrategy(this.manager, options), shardId);
      for (const event of Object.values(WebSocketShardEvents)) {
        (shard.on as (event: string, listener: (...args: unknown[]) => void) => unknown)(event, (...args) => emit(event, ...args, shardId));
      }
      this.shards.set(shardId, shard);
    }
  }

  async connect(): Promise<void> {
    await Promise.all([...this.shards.values()].map((shard) => shard.connect()));
  }

  async destroy(options: Omit<WebSocketShardDestroyOptions, 'recover'> = {}): Promise<void> {
    const shards = [...this.shards.values()];
    this.shards.clear();
    await Promise.all(shards.map((shard) => settleAndDestroy(shard, options)));
  }

  async send(shardId: number, payload: GatewaySendPayload): Promise<void> {
    const shard = this.shards.get(shardId);
    if (!shard) throw new RangeError(`Shard ${shardId} not found`);
    await shard.send(payload);
  }

  async fetchStatus(): Promise<Collection<number, WebSocketShardStatus>> {
    const { Collection } = discordCollection.get();
    return new Collection([...this.shards].map(([id, shard]) => [id, shard.status]));
  }
}

async function settleAndDestroy(shard: WebSocketShard, options: Omit<WebSocketShardDestroyOptions, 'recover'>): Promise<void> {
  const { WebSocketShardEvents, WebSocketShardStatus } = discordWs.get();
  const deadline = Date.now() + SETTLE_MS;
  while (shard.status === WebSocketShardStatus.Connecting && Date.now() < deadline) await sleep(25);
  const again = () => void shard.destroy().catch(() => undefined);
  shard.on(WebSocketShardEvents.Ready, again);
  shard.on(WebSocketShardEvents.Resumed, again);
  await shard.destroy(options);
}

/** A bot's own session store: the library's default is one per process, keyed by shard id, so two bots' shard 0 would resume each other's sessions. */
export function sessionStore() {
  const sessions = new Map<number, SessionInfo>();
  return {
    retrieveSessionInfo: (shardId: number) => sessions.get(shardId) ?? null,
    updateSessionInfo: (shardId: number, info: SessionInfo | null) => void (info ? sessions.set(shardId, info) : sessions.delete(shardId)),
  };
}
