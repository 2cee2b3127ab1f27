import type { REST } from '@discordjs/rest';
import { Routes, type APIGuildMember } from 'discord-api-types/v10';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { AccessReconcileStore, GuildError, ListedMember, PageRepairs } from '../store/access-reconcile.store.js';
import { WakeLoop } from '../wake-loop.js';
import { discordRest, isDiscordApiError } from './discord/discord-libraries.js';

/**
 * Drift repair (docs/access-discord.md, "Drift repair"): every
 * `TENURE_ACCESS_RECONCILE_SECONDS`, each Discord bot this process holds (the access worker's
 * lease, so its calls stay within the bot's one budget) is compared with Discord:
 *
 * 1. the project is planned again (AccessPlanStore.planProject), which also repairs what a crash
 *    between a change's commit and its planning could have missed;
 * 2. each guild the project's targets name is listed, 1,000 members a page, with the bot's own REST
 *    client (the worker's: the listing waits in the same rate-limit queues as the grants), and each
 *    page is compared with the rows of those members in one statement (src/store/access-reconcile.store.ts);
 * 3. rows of members no longer in the guild wait for them (`waiting_for_member`).
 *
 * A repair only makes rows `pending` with what Discord showed as `applied` (a write that wakes the
 * access worker after commit, src/database/wakeups.ts); the worker makes the calls, so a repair costs the one call that differs, and members tenure does not manage are never
 * read past the list. A refused listing (403 Missing Access: the bot is not in the guild, or the
 * Server Members intent is off; 10004 Unknown Guild) flags the guild target unhealthy.
 */

/** Discord's largest page of `GET /guilds/{guild}/members`. */
export const MEMBERS_PAGE = 1_000;

/** The bots this process may call: the access worker's leases and its REST client per bot. */
export interface HeldBots {
  /** The lease owner id of this process's access worker (`integrations.lease_owner`). */
  readonly id: string;
  /** The REST client of a bot this process holds, or null once it does not hold it any more. */
  clientFor(projectId: string): REST | null;
}

export interface ReconcilerDeps {
  store: AccessReconcileStore;
  /** Plans the whole project again (AccessPlanStore.planProject). */
  planProject(projectId: string): Promise<unknown>;
  bots: HeldBots;
  clock: Clock;
  logger: Logger;
}

export interface ReconcilerOptions {
  /** How old a comparison may get (TENURE_ACCESS_RECONCILE_SECONDS). */
  everyMs: number;
  /** How often the bots held are looked at (a newly held bot, never compared, is due at once). */
  tickMs: number;
}

export interface GuildReport {
  guildId: string;
  members: number;
  pages: number;
  repairs: PageRepairs & { absent: number };
  /** Set when the list was refused: the guild target is now unhealthy with it. */
  error?: GuildError;
}

export interface ProjectReport {
  projectId: string;
  guilds: GuildReport[];
  /** False when the bot was let go mid-way: the comparison is not recorded and is made again by its next holder. */
  completed: boolean;
}

const noRepairs = (): GuildReport['repairs'] => ({ regrant: 0, rejoined: 0, revoke: 0, absent: 0 });

/** Errors that say the member list of a guild cannot be read by this bot (see markGuildUnhealthy). */
function listingRefusal(err: unknown): GuildError | null {
  if (!isDiscordApiError(err)) return null;
  if (err.code === 50001 || err.code === 10004) return { code: String(err.code), message: err.message };
  if (err.status === 403) return { code: String(err.code === 0 ? 403 : err.code), message: err.message };
  return null;
}

export class Reconciler {
  /** The passes, while started: at once, every `tickMs`, and when woken (src/wake-loop.ts). */
  private loop: WakeLoop | null = null;
  /** Set by stop(): a running pass ends after the bot it is comparing. */
  private stopping = false;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly options: ReconcilerOptions,
  ) {}

  start(): void {
    this.stopping = false;
    this.loop = new WakeLoop(
      async () => void (await this.runOnce()),
      (err) => this.deps.logger.error({ err }, 'access: drift repair failed; retried at the next tick'),
      this.options.tickMs,
    );
    this.loop.start();
  }

  /**
   * Looks for due bots now: a resync asked for a comparison (it clears `reconciled_at` and wakes
   * the access workers), or the worker has just taken a bot. One pass at a time.
   */
  wake(): void {
    this.loop?.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const loop = this.loop;
    this.loop = null;
    await loop?.stop();
  }

  /** Compares every bot held here whose last comparison is older than `everyMs`, one after the other. */
  async runOnce(): Promise<ProjectReport[]> {
    const due = await this.deps.store.due(this.deps.bots.id, this.deps.clock.now(), this.options.everyMs);
    const reports: ProjectReport[] = [];
    for (const { projectId } of due) {
      if (this.stopping) break;
      const rest = this.deps.bots.clientFor(projectId);
      if (!rest) continue;
      try {
        reports.push(await this.reconcileProject(projectId, rest));
      } catch (err) {
        // Not recorded as compared: the next tick tries again (a 5xx or a network error, after the
        // library's own retries). One bot's failure does not hold up the others.
        this.deps.logger.error({ err, projectId }, 'access: drift repair of a project failed; tried again at the next tick');
      }
    }
    return reports;
  }

  /** Plans the project again, then compares each of its guilds with Discord, and records when. */
  async reconcileProject(projectId: string, rest: REST): Promise<ProjectReport> {
    const { store, logger } = this.deps;
    await this.deps.planProject(projectId);
    const guilds: GuildReport[] = [];
    for (const guildId of await store.guilds(projectId)) {
      // Let go of the bot (another process holds it now): its calls are that process's to make.
      if (this.deps.bots.clientFor(projectId) !== rest) return { projectId, guilds, completed: false };
      const report = await this.reconcileGuild(projectId, guildId, rest);
      guilds.push(report);
      const { regrant, rejoined, revoke, absent } = report.repairs;
      if (report.error) logger.warn({ projectId, guildId, error: report.error }, 'access: the guild member list was refused; guild target marked unhealthy');
      else if (regrant + rejoined + revoke + absent > 0) logger.info({ projectId, guildId, ...report.repairs, members: report.members }, 'access: drift repaired');
    }
    await store.markReconciled(projectId, this.deps.clock.now());
    return { projectId, guilds, completed: true };
  }

  private async reconcileGuild(projectId: string, guildId: string, rest: REST): Promise<GuildReport> {
    const { store } = this.deps;
    const report: GuildReport = { guildId, members: 0, pages: 0, repairs: noRepairs() };
    // Rows written after this instant are newer than the list: they are left out of the comparison.
    const seenAt = await store.now();
    const present: string[] = [];
    let after: string | undefined;
    // The bot's client exists, so its library was loaded to build it.
    const { makeURLSearchParams } = discordRest.get();
    for (;;) {
      let page: APIGuildMember[];
      try {
        page = (await rest.get(Routes.guildMembers(guildId), {
          query: makeURLSearchParams({ limit: MEMBERS_PAGE, ...(after ? { after } : {}) }),
        })) as APIGuildMember[];
      } catch (err) {
        const refusal = listingRefusal(err);
        if (!refusal) throw err;
        await store.markGuildUnhealthy(projectId, guildId, refusal);
        return { ...report, error: refusal };
      }
      report.pages++;
      const members: ListedMember[] = [];
      for (const m of page) if (m.user) members.push({ id: m.user.id, roles: m.roles });
      report.members += members.length;
      for (const m of members) present.push(m.id);
      const repairs = await store.repairPage(projectId, guildId, members, seenAt);
      report.repairs.regrant += repairs.regrant;
      report.repairs.rejoined += repairs.rejoined;
      report.repairs.revoke += repairs.revoke;
      if (page.length < MEMBERS_PAGE) break;
      // Pages are in ascending user id order; the next starts after this one's last member.
      after = members.at(-1)?.id;
      if (!after) break;
    }
    report.repairs.absent = await store.markAbsent(projectId, guildId, present, seenAt);
    await store.clearGuildListingError(projectId, guildId);
    return report;
  }
}
