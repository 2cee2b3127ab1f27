import type { Logger } from 'pino';

/**
 * What one bot's gateway heard about members (GUILD_MEMBER_ADD, GUILD_MEMBER_UPDATE), compared with
 * their access rows as drift repair compares a page of the member list: a member tenure waited for
 * is in the guild (their role is given), a role tenure gave was removed by hand (given again), a
 * member whose access ended holds a managed role again (taken again). The comparison only makes
 * rows `pending`; the access worker, woken by that write's commit, makes the call.
 *
 * One statement at a time per bot, in the order heard: what arrives meanwhile waits and goes in
 * the next statement, one per guild, the latest state of each member only. So a burst of events
 * (the bot's own grants come back as GUILD_MEMBER_UPDATE too) costs a statement per round, not per
 * event. Members tenure does not manage match no row and cost nothing more. A statement that fails
 * is logged and dropped: drift repair's next comparison catches what it would have repaired.
 */

/** A member as an event showed them: user id and role ids (`@everyone` not among them). */
export interface MemberSeen {
  id: string;
  roles: string[];
}

/** Members per statement, as a page of drift repair's member list. */
const PAGE = 1_000;

export class GatewayEvents {
  /** Waiting for the next statement: guild → user → roles. */
  private waiting = new Map<string, Map<string, string[]>>();
  private running: Promise<void> | null = null;

  constructor(
    private readonly projectId: string,
    private readonly repair: (projectId: string, guildId: string, members: readonly MemberSeen[]) => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  heard(guildId: string, member: MemberSeen): void {
    let guild = this.waiting.get(guildId);
    if (!guild) this.waiting.set(guildId, (guild = new Map()));
    guild.set(member.id, member.roles);
    this.running ??= this.drain();
  }

  /** Resolves once nothing waits or runs (a gateway closing lets its last statements finish). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.size > 0) {
        const batch = this.waiting;
        this.waiting = new Map();
        for (const [guildId, members] of batch) {
          const seen = [...members].map(([id, roles]) => ({ id, roles }));
          for (let i = 0; i < seen.length; i += PAGE) {
            const page = seen.slice(i, i + PAGE);
            try {
              await this.repair(this.projectId, guildId, page);
            } catch (err) {
              this.logger.error({ err, guildId, members: page.length }, 'access: comparing members the gateway heard of failed; drift repair catches up');
            }
          }
        }
      }
    } finally {
      this.running = null;
    }
  }
}
