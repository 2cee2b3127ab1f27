import type { DiscordFrontDeskStore } from '../../store/discord-front-desk.store.js';
import type { SecretBox } from '../integrations/secret-box.js';
import type { PlatformError } from '../targets/target.view.js';
import { COMMANDS, type CommandDefinition } from './discord-commands.js';

/**
 * Registers `/subscribe`, `/memberships` and `/subscribe-panel` in every guild of the project's
 * Discord targets (a bulk overwrite per guild: the guild holds exactly these), when the bot is
 * connected and when a Discord target is created or deleted. A failure never fails the request
 * that started it: it is recorded on the connection (`commands_error` in its status) and the next
 * registration clears it.
 */

/** Discord's side: the bulk overwrite in each guild; the guilds that refused, with why. */
export interface CommandRegistrar {
  register(
    token: string,
    applicationId: string,
    guildIds: readonly string[],
    commands: readonly CommandDefinition[],
  ): Promise<{ guildId: string; error: PlatformError }[]>;
}

export type CommandGuildStatements = Pick<DiscordFrontDeskStore, 'commandGuilds' | 'recordCommands'>;

export class DiscordCommandsRegistration {
  constructor(
    private readonly store: CommandGuildStatements,
    private readonly box: SecretBox | null,
    private readonly registrar: CommandRegistrar,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Registers the commands in the project's guilds and records how it went; never throws. */
  async register(projectId: string): Promise<void> {
    try {
      const bot = await this.store.commandGuilds(projectId);
      if (!bot?.applicationId || !this.box) return;
      const failures = await this.registrar.register(this.box.open(bot.botTokenSealed), bot.applicationId, bot.guildIds, COMMANDS);
      const first = failures[0];
      await this.store.recordCommands(
        projectId,
        first ? { code: first.error.code, message: `Guild ${first.guildId}: ${first.error.message}${failures.length > 1 ? ` (and ${failures.length - 1} more guilds)` : ''}` } : null,
      );
    } catch (err) {
      this.onError(err);
    }
  }
}
