import type { REST } from '@discordjs/rest';
import { countRateLimited, countRateLimitWait, type RateLimitScope } from '../../observability/access-calls.js';
import { discordRest } from './discord-libraries.js';
import { createDiscordRest } from './rest.js';

/**
 * The REST client the access worker keeps for each bot it holds: one per bot, so the library's
 * per-route buckets and its global limit are that bot's whole budget in this process, and the
 * lease (src/store/access-worker.store.ts) makes this process the only one calling with it.
 *
 * - `globalRequestsPerSecond` 50: Discord's published global limit per bot, kept by the library
 *   before sending, so the global 429 is not met in the first place.
 * - `rejectOnRateLimit` off: on a 429 or an empty bucket the library waits as Discord says
 *   (`retry_after`, `X-RateLimit-Reset-After`) and sends again; a rate limit never reaches the row.
 * - `retries` 0: the library would retry a 5xx or a timeout at once, with no pause, into a Discord
 *   that is struggling; the worker's own schedule (src/access/retry-schedule.ts) retries instead,
 *   after 1 s, 5 s, 30 s…, and the row shows each attempt.
 * - 429s received (which should be few) and waits the library made are counted for /metrics.
 */

export const DISCORD_GLOBAL_PER_SECOND = 50;

export interface BotRestOptions {
  /** Requests per second the library lets out for this bot (default Discord's 50). */
  globalRequestsPerSecond?: number;
}

function scopeOf(headers: Headers): RateLimitScope {
  const scope = headers.get('x-ratelimit-scope');
  if (scope === 'user' || scope === 'global' || scope === 'shared') return scope;
  return headers.has('x-ratelimit-global') ? 'global' : 'unknown';
}

/** Sync, as the worker builds a client when it takes a lease: it loads the library before (DiscordConnector.load). */
export function createBotRest(token: string, apiUrl: string, o: BotRestOptions = {}): REST {
  const { DefaultRestOptions, RESTEvents } = discordRest.get();
  const rest = createDiscordRest(token, apiUrl, {
    globalRequestsPerSecond: o.globalRequestsPerSecond ?? DISCORD_GLOBAL_PER_SECOND,
    rejectOnRateLimit: null,
    retries: 0,
    async makeRequest(url, init) {
      const response = await DefaultRestOptions.makeRequest(url, init);
      if (response.status === 429) countRateLimited(scopeOf(response.headers as Headers));
      return response;
    },
  });
  rest.on(RESTEvents.RateLimited, (limit) => countRateLimitWait(limit.global ? 'global' : 'route'));
  return rest;
}

/** Stops the client's sweep timers and listeners; requests still queued in it fail or finish on their own. */
export function closeBotRest(rest: REST): void {
  rest.clearHashSweeper();
  rest.clearHandlerSweeper();
  rest.removeAllListeners();
}
