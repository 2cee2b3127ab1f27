import type { REST, RESTOptions } from '@discordjs/rest';
import { Routes, type RESTGetAPICurrentUserResult } from 'discord-api-types/v10';
import { discordRest } from './discord-libraries.js';

/**
 * The one place tenure builds a Discord REST client: `@discordjs/rest`, which reads Discord's
 * rate-limit headers and queues each request in its route's bucket and under the global limit
 * (docs/access-discord.md, "How tenure calls Discord"). No hand-written HTTP client talks to Discord.
 */

/**
 * How long one request may take before it is aborted (the library's default is 15 s). Discord
 * answers in well under a second; a request that hangs for 10 s is a network fault, retried.
 */
export const DISCORD_TIMEOUT_MS = 10_000;

/**
 * A REST client for one bot. `apiUrl` is the REST root without version (TENURE_DISCORD_API_URL:
 * Discord itself, a REST proxy, or a local fake in tests); `options` override the library's own.
 * The library is loaded first (`discordRest.load()`): the access worker loads it before it takes a
 * bot, a token check or a registration before its calls.
 */
export function createDiscordRest(token: string, apiUrl: string, options: Partial<RESTOptions> = {}): REST {
  const { REST } = discordRest.get();
  return new REST({ version: '10', api: apiUrl, timeout: DISCORD_TIMEOUT_MS, ...options }).setToken(token);
}

export interface DiscordBotUser {
  id: string;
  username: string;
}

/**
 * The bot the client's token belongs to (`GET /users/@me`). A token Discord refuses throws the
 * library's DiscordAPIError with status 401; an unreachable Discord, its HTTPError (5xx) or the
 * fetch's own error.
 */
export async function fetchBotUser(rest: REST): Promise<DiscordBotUser> {
  const user = (await rest.get(Routes.user())) as RESTGetAPICurrentUserResult;
  return { id: user.id, username: user.username };
}
