import type { Container } from '../container.js';
import { DEFAULT_GUILD_JOIN_OPTIONS, GuildJoinJob, type GuildJoinOptions } from '../domain/web/guild-joins.js';
import { discordOAuth } from './discord-oauth.js';
import { guildMemberCalls } from './guild-member-calls.js';

/**
 * The guild joins after a payment (src/domain/web/guild-joins.ts) as a worker process runs them:
 * claimed from the database, made with the project's bot token at TENURE_DISCORD_API_URL, and
 * woken by every commit of events (a payment's grant writes its events in the transaction that
 * queues the join), polling as a safety net. Null without a secret box (no token can be opened).
 */
export function createGuildJoinJob(c: Container, o: Partial<GuildJoinOptions> = {}): GuildJoinRunner | null {
  const box = c.secretBox;
  if (!box) return null;
  const job = new GuildJoinJob(
    {
      queue: c.stores.guildJoins,
      outcomes: c.stores.guildJoins,
      calls: guildMemberCalls(c.config.access.discordApiUrl),
      openToken: (sealed) => box.open(sealed),
      seal: (plaintext) => box.seal(plaintext),
      oauth: discordOAuth(c.config.access.discordApiUrl),
      clock: c.clock,
      logger: c.logger,
    },
    { ...DEFAULT_GUILD_JOIN_OPTIONS, ...o },
  );
  return new GuildJoinRunner(job, c);
}

/** The job with its wake-ups: subscribed on start, unsubscribed on stop. */
export class GuildJoinRunner {
  private unsubscribe: Promise<() => void> | null = null;

  constructor(
    readonly job: GuildJoinJob,
    private readonly c: Pick<Container, 'database' | 'logger'>,
  ) {}

  start(): void {
    this.job.start();
    this.unsubscribe = this.c.database.wakeups.subscribe('events', () => this.job.wake());
    this.unsubscribe.catch((err: unknown) => this.c.logger.warn({ err }, 'guild joins: no wake-ups; polling only'));
  }

  wake(): void {
    this.job.wake();
  }

  idle(): Promise<void> {
    return this.job.idle();
  }

  async stop(): Promise<void> {
    const unsubscribe = await this.unsubscribe?.catch(() => null);
    unsubscribe?.();
    await this.job.stop();
  }
}
