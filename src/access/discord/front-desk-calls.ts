import type { REST } from '@discordjs/rest';
import { Routes, type RESTGetCurrentApplicationResult } from 'discord-api-types/v10';
import type { CommandDefinition } from '../../domain/front-desk/discord-commands.js';
import type { CommandRegistrar } from '../../domain/front-desk/discord-commands-registration.js';
import type { InteractionFollowUps } from '../../domain/front-desk/discord-interactions.js';
import type { MessageData } from '../../domain/front-desk/discord-messages.js';
import type { PlatformError } from '../../domain/targets/target.view.js';
import { discordRest, isDiscordApiError, isDiscordHttpError } from './discord-libraries.js';
import { createDiscordRest, DISCORD_TIMEOUT_MS } from './rest.js';

/**
 * The Discord calls of the commands for members (docs/front-desk.md, "Discord: commands for
 * members"), through @discordjs/rest like every other call: the bot's application, the commands'
 * bulk overwrite per guild, and the edit of a deferred interaction answer.
 */

export interface DiscordApplicationInfo {
  id: string;
  /** The application's public key, hex: interactions are signed with its private half. */
  verifyKey: string;
}

/** `GET /applications/@me` with the bot's client; throws as the library does. */
export async function fetchApplication(rest: REST): Promise<DiscordApplicationInfo> {
  const app = (await rest.get(Routes.currentApplication())) as RESTGetCurrentApplicationResult;
  return { id: app.id, verifyKey: app.verify_key };
}

/** What a refused or failed call is recorded as, in the form of the access rows' errors. */
export function platformErrorOf(err: unknown): PlatformError {
  if (isDiscordApiError(err)) return { code: String(err.code || err.status), message: err.message };
  if (isDiscordHttpError(err)) return { code: 'server_error', message: `Discord answered HTTP ${err.status}` };
  if ((err as { name?: string }).name === 'AbortError') return { code: 'timeout', message: 'Discord did not answer in time' };
  return { code: 'network', message: 'Discord could not be reached' };
}

/** Registration runs beside a request or a target change: one retry, 5 s a try. */
const REGISTER_OPTIONS = { retries: 1, timeout: 5_000 } as const;

export function discordCommandRegistrar(apiUrl: string): CommandRegistrar {
  return {
    async register(token: string, applicationId: string, guildIds: readonly string[], commands: readonly CommandDefinition[]) {
      await discordRest.load();
      const rest = createDiscordRest(token, apiUrl, REGISTER_OPTIONS);
      const failures: { guildId: string; error: PlatformError }[] = [];
      try {
        for (const guildId of guildIds) {
          try {
            await rest.put(Routes.applicationGuildCommands(applicationId, guildId), { body: commands });
          } catch (err) {
            failures.push({ guildId, error: platformErrorOf(err) });
          }
        }
      } finally {
        rest.clearHashSweeper();
        rest.clearHandlerSweeper();
      }
      return failures;
    },
  };
}

/**
 * Edits deferred answers: the interaction's own token authorizes the call (valid 15 minutes), so
 * the client carries no bot token. Built at the first edit (the library is loaded then), and kept.
 */
export function discordFollowUps(apiUrl: string): InteractionFollowUps {
  let client: REST | null = null;
  const restOf = async (): Promise<REST> => {
    const { REST } = await discordRest.load();
    return (client ??= new REST({ version: '10', api: apiUrl, timeout: DISCORD_TIMEOUT_MS }));
  };
  return {
    async editOriginal(applicationId: string, interactionToken: string, message: MessageData) {
      const rest = await restOf();
      await rest.patch(Routes.webhookMessage(applicationId, interactionToken, '@original'), { body: message, auth: false });
    },
  };
}
