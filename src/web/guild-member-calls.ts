import type { GuildMemberCalls, JoinAnswer } from '../domain/web/guild-joins.js';

/**
 * Add Guild Member (docs/web.md, "After payment"): `PUT {api}/v10/guilds/{guild}/members/{user}`
 * with the bot's token and the member's OAuth2 access token in the body. 201: added; 204: already a
 * member. Errors are Discord's JSON `{code, message}`: 30001 (the member is in too many guilds),
 * 40007 (banned from the guild) and 50013 (the bot lacks CREATE_INSTANT_INVITE) are for good; 429
 * and 5xx pass. The tokens never reach a log or an error.
 */

const TIMEOUT_MS = 10_000;

export function guildMemberCalls(apiUrl: string): GuildMemberCalls {
  const api = apiUrl.replace(/\/+$/, '');
  return {
    async addMember(botToken, guildId, userId, accessToken): Promise<JoinAnswer> {
      let response: Response;
      try {
        response = await fetch(`${api}/v10/guilds/${encodeURIComponent(guildId)}/members/${encodeURIComponent(userId)}`, {
          method: 'PUT',
          headers: { authorization: `Bot ${botToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ access_token: accessToken }),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (err) {
        return { kind: 'retry', error: `Discord could not be reached (${err instanceof Error ? err.name : 'unknown'})` };
      }
      if (response.status === 201) return { kind: 'added' };
      if (response.status === 204) return { kind: 'member' };
      const body = (await response.json().catch(() => ({}))) as { code?: unknown; message?: unknown; retry_after?: unknown };
      const code = typeof body.code === 'number' ? String(body.code) : String(response.status);
      const message = typeof body.message === 'string' ? body.message.slice(0, 200) : `HTTP ${response.status}`;
      if (response.status === 429) {
        const after = typeof body.retry_after === 'number' ? body.retry_after * 1000 : Number(response.headers.get('retry-after') ?? 1) * 1000;
        return { kind: 'retry', error: `429: ${message}`, retryAfterMs: after };
      }
      if (response.status >= 500) return { kind: 'retry', error: `${response.status}: ${message}` };
      return { kind: 'refused', error: { code, message } };
    },
  };
}
