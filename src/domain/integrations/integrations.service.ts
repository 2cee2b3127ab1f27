import type { IntegrationsStore } from '../../store/integrations.store.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import type { Platform, PlatformError } from '../targets/target.view.js';
import { SlidingBudget } from '../sliding-budget.js';
import { MISSING_KEY_MESSAGE } from './encryption-key.js';
import {
  toChatRightsView,
  toIntegrationStatusView,
  toIntegrationView,
  type ChatRightsView,
  type IntegrationStatusView,
  type IntegrationView,
} from './integration.view.js';
import { SecretBoxError, type SecretBox } from './secret-box.js';

/**
 * A project's bot connections (docs/access.md, "Connecting a bot";
 * docs/access-telegram.md). The token is checked with the platform before anything is stored, sealed with
 * the instance's key, and never leaves: no answer, event or log carries it. Each platform brings
 * its own token rules and check (`BotTokenCheck`); the rest is the same for all.
 */

/** What the platform said of a token. */
export type TokenVerdict =
  | { ok: true; botId: string; botName: string; application?: { id: string; verifyKey: string } }
  /** The platform refused the token (Discord: 401): a client error. */
  | { ok: false; refused: true; message: string }
  /** The platform could not be asked (unreachable, 5xx, rate limited): try again later. */
  | { ok: false; refused: false; message: string; retryAfterSeconds?: number };

/** A target whose chat the status asks the platform about: `chatId` is the target's `external_id`. */
export interface ChatToCheck {
  targetId: string;
  targetName: string;
  chatId: string;
}

/** What the platform said of the bot in one chat; `error` when it could not say (all false then). */
export interface BotChatRights {
  isAdmin: boolean;
  canInviteUsers: boolean;
  canRestrictMembers: boolean;
  error: PlatformError | null;
}

/** A platform's side of a connection: how its tokens look, and how one is checked. */
export interface BotTokenCheck {
  /** The platform's name in messages (`Discord`). */
  readonly label: string;
  /** The token as the platform takes it, or why `raw` cannot be one (a VALIDATION_ERROR message). */
  normalize(raw: string): { token: string } | { problem: string };
  /** Asks the platform who the token belongs to. Never throws for what the platform answers. */
  verify(token: string): Promise<TokenVerdict>;
  /**
   * For a platform where the bot must be an admin of each target chat (Telegram): its rights in
   * each of `chats`, asked live with the stored token, in `chats`' order. The status shows them
   * as `chats`; a platform without it shows none. Never throws for what the platform answers.
   */
  chatRights?(token: string, botId: string, chats: readonly ChatToCheck[]): Promise<BotChatRights[]>;
}

/** The planner: connecting a bot plans the whole project (AccessPlanStore.planProject). */
export interface ProjectPlanner {
  planProject(projectId: string): Promise<unknown>;
}

/** What follows a connection on the platform (Discord: the commands registered in the project's guilds); never throws. */
export type AfterConnect = (projectId: string, platform: Platform) => Promise<void>;

/** A Discord application's client secret as the Developer Portal shows it (32 characters today; the bounds leave room). */
const CLIENT_SECRET = /^[A-Za-z0-9_-]{16,128}$/;

/** Token checks a project may make a minute, per process (check-budget.ts says why). */
export const TOKEN_CHECKS_PER_MINUTE = 10;

/**
 * The target chats a status asks about, oldest first: each is a live call to the platform while
 * the request waits, and a status is for seeing what is wrong, not an inventory.
 */
export const MAX_CHATS_CHECKED = 50;

/** What the service needs of the connections' store (src/store/integrations.store.ts). */
export type IntegrationStatements = Pick<IntegrationsStore, 'connect' | 'status' | 'delete' | 'chatsToCheck'>;

export class IntegrationsService {
  private readonly budget: SlidingBudget;

  constructor(
    private readonly store: IntegrationStatements,
    private readonly box: SecretBox | null,
    private readonly checks: Partial<Record<Platform, BotTokenCheck>>,
    private readonly planner: ProjectPlanner,
    private readonly clock: Clock,
    private readonly afterConnect: AfterConnect = async () => {},
  ) {
    this.budget = new SlidingBudget(TOKEN_CHECKS_PER_MINUTE, 60_000, clock);
  }

  /**
   * Connects the project's bot, or replaces it: the token is checked with the platform first, and
   * nothing is stored unless it names a bot. A (re)connection retries what failed under the last
   * one (its targets healthy again, their failed rows pending), then plans the whole project.
   */
  async connect(projectId: string, platform: Platform, rawToken: string, clientSecret?: string): Promise<Result<IntegrationView>> {
    const check = this.checkOf(platform);
    const normalized = check.normalize(rawToken);
    if ('problem' in normalized) return fail('VALIDATION_ERROR', normalized.problem);
    if (clientSecret !== undefined && (platform !== 'discord' || !CLIENT_SECRET.test(clientSecret))) {
      return fail('VALIDATION_ERROR', 'client_secret must be the Discord application\'s client secret: 16 to 128 characters of A-Z, a-z, 0-9, - and _');
    }
    // Before the platform is asked: without a key the token could not be kept anyway.
    if (!this.box) return fail('SERVICE_UNAVAILABLE', MISSING_KEY_MESSAGE);
    const allowed = this.budget.take(projectId);
    if (!allowed.ok) {
      const message = `At most ${TOKEN_CHECKS_PER_MINUTE} bot token checks a minute per project: each asks ${check.label}, which bans an address sending too many refused tokens`;
      return { ok: false, error: new AppError('RATE_LIMIT_EXCEEDED', message, undefined, allowed.retryAfterSeconds) };
    }
    const verdict = await check.verify(normalized.token);
    if (!verdict.ok) {
      if (verdict.refused) return fail('VALIDATION_ERROR', verdict.message);
      return { ok: false, error: new AppError('SERVICE_UNAVAILABLE', verdict.message, undefined, verdict.retryAfterSeconds) };
    }
    const connected = await this.store.connect(
      {
        projectId,
        platform,
        botTokenSealed: this.box.seal(normalized.token),
        botId: verdict.botId,
        botName: verdict.botName,
        applicationId: verdict.application?.id ?? null,
        verifyKey: verdict.application?.verifyKey ?? null,
        clientSecretSealed: clientSecret === undefined ? null : this.box.seal(clientSecret),
      },
      this.clock.now(),
    );
    if (!connected) {
      return fail(
        'CONFLICT',
        `This ${check.label} bot (id ${verdict.botId}) is connected to another project; a bot serves one project. ` +
          'Disconnect it there first, or create another bot for this project',
      );
    }
    await this.planner.planProject(projectId);
    await this.afterConnect(projectId, platform);
    return ok(toIntegrationView(connected));
  }

  /**
   * The connection, the targets its bot cannot act on, and its access rows by state; for a
   * platform with `chatRights`, the bot's rights in each target chat, asked now.
   */
  async status(projectId: string, platform: Platform): Promise<Result<IntegrationStatusView>> {
    const stored = await this.stored(projectId, platform);
    if (!stored.ok) return stored;
    const view = stored.value;
    const check = this.checkOf(platform);
    if (!check.chatRights) return ok(view);
    const chats = await this.chatRightsOf(projectId, platform, check);
    // Disconnected while the status was read: as if it had been a moment earlier.
    return chats ? ok({ ...view, chats }) : fail('NOT_FOUND', this.notConnected(platform));
  }

  /** The connection as stored (its bot, the targets it cannot act on, its access rows by state), without asking the platform. */
  async stored(projectId: string, platform: Platform): Promise<Result<IntegrationStatusView>> {
    const status = await this.store.status(projectId, platform);
    return status ? ok(toIntegrationStatusView(status)) : fail('NOT_FOUND', this.notConnected(platform));
  }

  /** Disconnects: the row and its sealed token go; access rows stay, and nothing is taken back on the platform. */
  async disconnect(projectId: string, platform: Platform): Promise<Result<null>> {
    return (await this.store.delete(projectId, platform)) ? ok(null) : fail('NOT_FOUND', this.notConnected(platform));
  }

  /** The bot's rights in the project's first target chats, with the stored token; null when not connected. */
  private async chatRightsOf(projectId: string, platform: Platform, check: BotTokenCheck): Promise<ChatRightsView[] | null> {
    const bot = await this.store.chatsToCheck(projectId, platform, MAX_CHATS_CHECKED);
    if (!bot) return null;
    if (bot.chats.length === 0) return [];
    const token = this.open(bot.botTokenSealed);
    const rights =
      'problem' in token
        ? bot.chats.map(() => ({ isAdmin: false, canInviteUsers: false, canRestrictMembers: false, error: token.problem }))
        : await check.chatRights!(token.token, bot.botId, bot.chats);
    return bot.chats.map((chat, i) => toChatRightsView(chat, rights[i]!));
  }

  /** The stored token, or why this instance cannot open it (no key, or a key other than the one that sealed it). */
  private open(sealed: string): { token: string } | { problem: PlatformError } {
    if (!this.box) return { problem: { code: 'encryption_key_missing', message: MISSING_KEY_MESSAGE } };
    try {
      return { token: this.box.open(sealed) };
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      return { problem: { code: 'token_unreadable', message: `The stored bot token cannot be opened (${err.message}); connect the bot again` } };
    }
  }

  private checkOf(platform: Platform): BotTokenCheck {
    const check = this.checks[platform];
    // Routes exist only for the platforms the container gives a check: a missing one is a wiring fault.
    if (!check) throw new Error(`no bot token check for ${platform}`);
    return check;
  }

  private notConnected(platform: Platform): string {
    return `No ${this.checks[platform]?.label ?? platform} bot is connected to this project`;
  }
}
