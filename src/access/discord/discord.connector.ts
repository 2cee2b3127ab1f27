import type { DiscordAPIError, REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import type { AccessError, ClaimedAccess } from '../../store/access-worker.store.js';
import type { CallResult, PlatformConnector } from '../connector.js';
import { closeBotRest, createBotRest, type BotRestOptions } from './bot-rest.js';
import { discordRest, isDiscordApiError, isDiscordHttpError, isDiscordRateLimitError } from './discord-libraries.js';

/**
 * One access row, one Discord call (docs/access-discord.md, "How tenure calls Discord"), and what its
 * answer means for the row. Which call:
 *
 * | kind  | desired | on_expiry     | call                                                  |
 * |-------|---------|---------------|-------------------------------------------------------|
 * | role  | granted |               | PUT /guilds/{guild}/members/{user}/roles/{role}       |
 * | role  | revoked | `remove_role` | DELETE /guilds/{guild}/members/{user}/roles/{role}    |
 * | guild | granted |               | GET /guilds/{guild}/members/{user} (a check, see below)|
 * | guild | revoked | `kick`        | DELETE /guilds/{guild}/members/{user}                 |
 * | any   | revoked | `none`        | no call                                               |
 *
 * A bot cannot put someone into a guild: `PUT /guilds/{guild}/members/{user}` needs an OAuth2
 * access token of that user with the `guilds.join` scope, which only the user can grant by
 * authorising an application; tenure holds bot tokens only. So a guild "grant" checks that the
 * member is there: present → synced; 10007 Unknown Member → `waiting_for_member` (the owner sends
 * them the invite; drift repair sees them join). A role grant to someone not in the guild waits
 * the same way.
 *
 * The library waits out rate limits (429, `retry_after`, the global limit) itself; it never
 * returns them here.
 */

export type DiscordCall = Pick<ClaimedAccess, 'kind' | 'externalId' | 'guildId' | 'userId' | 'desired' | 'onExpiry'>;

/** `X-Audit-Log-Reason`: the guild's audit log says who did it and why. */
export const AUDIT_REASON = { granted: 'tenure: membership active', revoked: 'tenure: membership ended' } as const;

export interface PlannedRequest {
  method: 'GET' | 'PUT' | 'DELETE';
  route: `/${string}`;
  reason: string | undefined;
}

/** The request a row needs, or null when there is nothing to call. */
export function requestFor(row: DiscordCall): PlannedRequest | null {
  if (row.kind === 'role') {
    const guildId = row.guildId;
    if (!guildId) return null;
    const route = Routes.guildMemberRole(guildId, row.userId, row.externalId);
    if (row.desired === 'granted') return { method: 'PUT', route, reason: AUDIT_REASON.granted };
    return row.onExpiry === 'remove_role' ? { method: 'DELETE', route, reason: AUDIT_REASON.revoked } : null;
  }
  if (row.kind === 'guild') {
    const route = Routes.guildMember(row.externalId, row.userId);
    // A read leaves nothing in the audit log: no reason.
    if (row.desired === 'granted') return { method: 'GET', route, reason: undefined };
    return row.onExpiry === 'kick' ? { method: 'DELETE', route, reason: AUDIT_REASON.revoked } : null;
  }
  return null;
}

/** A row the calls above can apply: a guild, or a role whose guild is known. */
export function isDiscordTarget(row: Pick<DiscordCall, 'kind' | 'guildId'>): boolean {
  return row.kind === 'guild' || (row.kind === 'role' && row.guildId !== null);
}

/** Discord's JSON error codes tenure tells apart (docs: Opcodes and Status Codes, "JSON Error Codes"). */
export const DISCORD_CODES = {
  unknownGuild: 10004,
  unknownMember: 10007,
  unknownRole: 10011,
  unknownUser: 10013,
  missingAccess: 50001,
  missingPermissions: 50013,
} as const;

/** Answers to a revoke that mean the member holds nothing there. */
const REVOKED_ANYWAY: ReadonlySet<number> = new Set([
  DISCORD_CODES.unknownMember,
  DISCORD_CODES.unknownUser,
  DISCORD_CODES.unknownRole,
  DISCORD_CODES.unknownGuild,
]);

/** What the owner can do about each target-wide error, shown in the target's health and the row's last_error. */
const TARGET_FAULTS: Readonly<Record<number, string>> = {
  [DISCORD_CODES.missingPermissions]:
    "the bot lacks Manage Roles (Kick Members to kick), or its highest role is not above the role it gives or the member's highest role",
  [DISCORD_CODES.unknownRole]: 'the role is not in the guild any more (deleted on Discord?): fix the target external_id',
  [DISCORD_CODES.unknownGuild]: 'the guild does not exist or the bot was removed from it',
  [DISCORD_CODES.missingAccess]: 'the bot is not in the guild: add it with the invite link of its application',
};

export const TOKEN_REFUSED: AccessError = {
  code: 'unauthorized',
  message: 'Discord refused the bot token (401 Unauthorized): reset it in the Developer Portal and connect the bot again',
};

/** Discord's own message of an API error (its `message`, without the flattened field errors). */
function discordMessage(err: DiscordAPIError): string {
  const raw = err.rawError as { message?: unknown };
  return typeof raw.message === 'string' ? raw.message : err.message;
}

/**
 * What an error thrown by the call means for the row, given what the row wanted. Pure: the
 * error classes are the library's (DiscordAPIError: Discord answered 4xx with a JSON code;
 * HTTPError: a 5xx after the library's retries; anything else: the request never got an answer).
 */
export function resultOfError(err: unknown, row: Pick<DiscordCall, 'desired'>, aborted = false): CallResult {
  if (aborted) return { outcome: 'aborted' };
  if (isDiscordApiError(err)) {
    const code = typeof err.code === 'number' ? err.code : Number.NaN;
    if (err.status === 401) return { outcome: 'unauthorized', error: TOKEN_REFUSED };
    if (err.status >= 500) return { outcome: 'retry', error: { code: 'server_error', message: `Discord answered ${err.status}: ${discordMessage(err)}` } };
    const error = { code: String(err.code), message: discordMessage(err) };
    // No such member, account, role or guild: nothing is held there, which is what a revoke wants
    // (a deleted role's members are cleaned up without flagging anything).
    if (row.desired === 'revoked' && REVOKED_ANYWAY.has(code)) return { outcome: 'applied' };
    if (code === DISCORD_CODES.unknownMember) {
      return { outcome: 'waiting_for_member', error: { ...error, message: `${error.message}: the user is not in the guild; access is given when they join` } };
    }
    const hint = TARGET_FAULTS[code];
    if (hint) return { outcome: 'failed', targetFault: true, error: { ...error, message: `${error.message}: ${hint}` } };
    if (err.status === 429) return { outcome: 'retry', error };
    // Anything else about this one member (10013 Unknown User, 50035 an id that is not a snowflake…):
    // the same request would fail again, so no retry; the target is not at fault.
    return { outcome: 'failed', targetFault: false, error };
  }
  if (isDiscordHttpError(err)) return { outcome: 'retry', error: { code: 'server_error', message: `Discord answered ${err.status}: ${err.message}` } };
  if (isDiscordRateLimitError(err)) return { outcome: 'retry', error: { code: 'rate_limited', message: err.message } };
  if (err instanceof Error && /Expected token to be set/.test(err.message)) {
    // After a 401 the library drops the token: the bot's queued calls fail with this.
    return { outcome: 'unauthorized', error: TOKEN_REFUSED };
  }
  if (err instanceof Error && err.name === 'AbortError') {
    return { outcome: 'retry', error: { code: 'timeout', message: 'Discord did not answer in time' } };
  }
  const message = err instanceof Error ? causeMessage(err) : String(err);
  return { outcome: 'retry', error: { code: 'network', message: `Discord could not be reached: ${message}` } };
}

/** `fetch failed` says nothing; its cause (ECONNREFUSED, a socket closed…) does. */
function causeMessage(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
}

/** Makes the row's call with the bot's REST client and says what it means; never throws. */
export async function applyOnDiscord(rest: REST, row: DiscordCall, signal: AbortSignal): Promise<CallResult> {
  if (!isDiscordTarget(row)) {
    return { outcome: 'failed', targetFault: true, error: { code: 'unsupported_target', message: `a Discord ${row.kind} target cannot be applied (a role needs its guild as parent target)` } };
  }
  const request = requestFor(row);
  if (!request) return { outcome: 'unchanged' };
  if (signal.aborted) return { outcome: 'aborted' };
  try {
    const options = { signal, ...(request.reason ? { reason: request.reason } : {}) };
    if (request.method === 'PUT') await rest.put(request.route, options);
    else if (request.method === 'DELETE') await rest.delete(request.route, options);
    else await rest.get(request.route, options);
    return { outcome: 'applied' };
  } catch (err) {
    return resultOfError(err, row, signal.aborted);
  }
}

export interface DiscordConnectorOptions extends BotRestOptions {
  /**
   * Hold every connected bot, not only those with work: with the gateway on (TENURE_DISCORD_GATEWAY)
   * the holder keeps the bot's one gateway connection (gateway.ts), so one must always be held.
   */
  holdAlways?: boolean;
}

/** Discord for the access engine: one REST client per bot held (bot-rest.ts), one call per row. */
export function discordConnector(apiUrl: string, o: DiscordConnectorOptions = {}): PlatformConnector<REST> {
  return {
    platform: 'discord',
    label: 'Discord',
    holdAlways: o.holdAlways ?? false,
    load: async () => void (await discordRest.load()),
    createClient: (token) => createBotRest(token, apiUrl, o),
    closeClient: closeBotRest,
    apply: (rest, row, signal) => applyOnDiscord(rest, row, signal),
    pathOf: (row) => requestFor(row)?.route ?? null,
    onBucketWait: (rest, listener) => rest.on(discordRest.get().RESTEvents.RateLimited, listener),
  };
}
