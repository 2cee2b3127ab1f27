import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { PlatformError } from '../targets/target.view.js';
import { LoopJob, WakeLoop } from '../../wake-loop.js';
import type { DiscordOAuth } from './discord-login.service.js';

/**
 * After a payment, the bot adds a member who logged in with Discord on the web to the guilds of
 * the plan's Discord targets (docs/web.md, "After payment"): Add Guild Member, `PUT
 * /guilds/{guild}/members/{user}` with the member's own OAuth2 token (scope `guilds.join`) and the
 * bot's authorization; 201 added, 204 already a member. The join is queued in the payment's
 * transaction (one per payment key, only for a member whose token tenure holds) and claimed here
 * with a lease, so it survives a restart and is made by one process. Once the member is in, their
 * access rows are due again, so the role lands without an invite. What Discord refuses for good
 * (30001 too many guilds, 40007 banned, 50013 missing permission) fails the join with an
 * `access.failed` event per target of the plan in that guild.
 */

export interface ClaimedJoin {
  id: string;
  projectId: string;
  userId: string;
  attempt: number;
  /** The member's sealed access token and when it expires; null when tenure no longer holds one. */
  accessTokenSealed: string | null;
  tokenExpiresAt: Date | null;
  /** Their sealed refresh token, and the project's application with its sealed client secret: what renews an expired access token. */
  refreshTokenSealed: string | null;
  applicationId: string | null;
  clientSecretSealed: string | null;
  /** The project's Discord bot token, sealed; null when no bot is connected. */
  botTokenSealed: string | null;
  /** The distinct guilds of the plan's Discord targets. */
  guildIds: string[];
}

export interface GuildJoinQueue {
  claim(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedJoin[]>;
}

export interface GuildJoinOutcomes {
  /** The member is in every guild: the join is done and their granted access rows are due now. */
  joined(j: ClaimedJoin, now: Date): Promise<void>;
  retry(id: string, next: Date, error: string): Promise<void>;
  /** Refused for good in `guildId`: the join fails, with `access.failed` for the plan's targets there. */
  failed(j: ClaimedJoin, guildId: string, error: PlatformError, now: Date): Promise<void>;
  /** Nothing to do any more (no bot, no guild): the join ends without an event. */
  dropped(id: string, reason: string, now: Date): Promise<void>;
  /** Keeps the member's renewed tokens, sealed. */
  renewed(j: ClaimedJoin, t: { accessTokenSealed: string; refreshTokenSealed: string | null; expiresAt: Date }): Promise<void>;
}

/** What Discord answered Add Guild Member. */
export type JoinAnswer =
  | { kind: 'added' }
  | { kind: 'member' }
  | { kind: 'refused'; error: PlatformError }
  | { kind: 'retry'; error: string; retryAfterMs?: number };

export interface GuildMemberCalls {
  addMember(botToken: string, guildId: string, userId: string, accessToken: string): Promise<JoinAnswer>;
}

export interface GuildJoinDeps {
  queue: GuildJoinQueue;
  outcomes: GuildJoinOutcomes;
  calls: GuildMemberCalls;
  openToken: (sealed: string) => string;
  seal: (plaintext: string) => string;
  /** Renews an expired access token (Discord's refresh grant). */
  oauth: Pick<DiscordOAuth, 'refresh'>;
  clock: Clock;
  logger: Logger;
}

export interface GuildJoinOptions {
  pollMs: number;
  batchSize: number;
  leaseMs: number;
  /** After this many attempts a join that keeps meeting 5xx or rate limits fails. */
  maxAttempts: number;
}

export const DEFAULT_GUILD_JOIN_OPTIONS: GuildJoinOptions = { pollMs: 5_000, batchSize: 20, leaseMs: 60_000, maxAttempts: 8 };

/** 10 s, 20 s, 40 s… capped at 10 minutes: Discord's 5xx and limits pass. */
export function retryDelayMs(attempt: number): number {
  return Math.min(10_000 * 2 ** Math.max(0, attempt - 1), 600_000);
}

export class GuildJoinJob extends LoopJob {
  protected readonly loop: WakeLoop;

  constructor(
    private readonly deps: GuildJoinDeps,
    private readonly options: GuildJoinOptions = DEFAULT_GUILD_JOIN_OPTIONS,
  ) {
    super();
    this.loop = new WakeLoop(() => this.drain(), (err) => deps.logger.error({ err }, 'guild joins: a pass failed; the joins are retried after their lease'), options.pollMs);
  }


  private async drain(): Promise<void> {
    const { batchSize, leaseMs } = this.options;
    for (;;) {
      if (this.loop.isStopped) return;
      const now = this.deps.clock.now();
      const claimed = await this.deps.queue.claim(now, new Date(now.getTime() + leaseMs), batchSize);
      for (const j of claimed) await this.joinOne(j);
      if (claimed.length < batchSize) return;
    }
  }

  private async joinOne(j: ClaimedJoin): Promise<void> {
    const { outcomes, clock, logger } = this.deps;
    const now = clock.now();
    if (j.botTokenSealed === null) return outcomes.dropped(j.id, 'no Discord bot is connected', now);
    if (j.guildIds.length === 0) return outcomes.dropped(j.id, 'the plan grants no Discord target', now);
    const where = { project_id: j.projectId, guild_join_id: j.id, user_id: j.userId, attempt: j.attempt };
    let bot: string;
    let member: string | null;
    try {
      bot = this.deps.openToken(j.botTokenSealed);
      const fresh = j.accessTokenSealed !== null && j.tokenExpiresAt !== null && j.tokenExpiresAt.getTime() > now.getTime();
      member = fresh ? this.deps.openToken(j.accessTokenSealed!) : await this.renew(j, now);
    } catch (err) {
      logger.warn({ ...where, err: String(err) }, 'guild joins: a sealed token cannot be opened');
      return outcomes.dropped(j.id, 'a sealed token cannot be opened', now);
    }
    if (member === null) {
      // Discord's access tokens last about a week; without a refresh Discord takes, the member must log in again.
      return outcomes.failed(j, j.guildIds[0]!, { code: 'oauth_token_expired', message: 'The member’s Discord login expired before the payment cleared; they can join with an invite or log in again' }, now);
    }
    for (const guildId of j.guildIds) {
      const answer = await this.deps.calls.addMember(bot, guildId, j.userId, member);
      if (answer.kind === 'added' || answer.kind === 'member') continue;
      const at = clock.now();
      if (answer.kind === 'refused') {
        logger.info({ ...where, guild_id: guildId, code: answer.error.code }, 'guild joins: Discord refused to add the member');
        return outcomes.failed(j, guildId, answer.error, at);
      }
      if (j.attempt >= this.options.maxAttempts) return outcomes.failed(j, guildId, { code: 'retries_exhausted', message: answer.error }, at);
      const delay = Math.max(answer.retryAfterMs ?? 0, retryDelayMs(j.attempt));
      return outcomes.retry(j.id, new Date(at.getTime() + delay), answer.error);
    }
    return outcomes.joined(j, clock.now());
  }

  /** A new access token from the member's refresh token, kept sealed; null when there is none or Discord refuses it. */
  private async renew(j: ClaimedJoin, now: Date): Promise<string | null> {
    if (j.refreshTokenSealed === null || j.applicationId === null || j.clientSecretSealed === null) return null;
    const answer = await this.deps.oauth.refresh({
      clientId: j.applicationId,
      clientSecret: this.deps.openToken(j.clientSecretSealed),
      refreshToken: this.deps.openToken(j.refreshTokenSealed),
    });
    if (answer.kind !== 'ok') {
      this.deps.logger.info({ project_id: j.projectId, guild_join_id: j.id, outcome: answer.kind, error: answer.error }, 'guild joins: the member’s Discord token could not be renewed');
      return null;
    }
    const { seal } = this.deps;
    await this.deps.outcomes.renewed(j, {
      accessTokenSealed: seal(answer.accessToken),
      refreshTokenSealed: answer.refreshToken === null ? null : seal(answer.refreshToken),
      expiresAt: new Date(now.getTime() + answer.expiresInSeconds * 1000),
    });
    return answer.accessToken;
  }
}

/** Where a member's join stands, as the done page tells them (docs/web.md, "What the done page tells the member"). */
export type JoinStanding =
  | { kind: 'joining' }
  | { kind: 'joined' }
  | { kind: 'failed'; reason: 'too-many-guilds' | 'banned' | 'bot-cannot-invite' | 'other' };

/** The member's latest join after buying a plan, as the store keeps it; null when none was queued. */
export interface GuildJoinReader {
  latestJoin(projectId: string, userId: string, planId: string): Promise<{ state: string; lastError: string | null } | null>;
}

/** Discord's codes a member can do something about; the store keeps a failure as `{code}: {message}`. */
const FAILURE_REASONS: Record<string, 'too-many-guilds' | 'banned' | 'bot-cannot-invite'> = { '30001': 'too-many-guilds', '40007': 'banned', '50013': 'bot-cannot-invite' };

export function joinStandingOf(join: { state: string; lastError: string | null } | null): JoinStanding | null {
  if (!join) return null;
  if (join.state === 'joined') return { kind: 'joined' };
  if (join.state !== 'failed') return { kind: 'joining' };
  const code = /^(\d+):/.exec(join.lastError ?? '')?.[1] ?? '';
  return { kind: 'failed', reason: Object.hasOwn(FAILURE_REASONS, code) ? FAILURE_REASONS[code]! : 'other' };
}
