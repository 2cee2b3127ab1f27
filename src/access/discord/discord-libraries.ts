import type { DiscordAPIError, HTTPError, RateLimitError } from '@discordjs/rest';
import { LazyLibrary } from '../../lazy-library.js';

/**
 * discord.js's packages, loaded at first use (src/lazy-library.ts): `@discordjs/rest` when a bot is
 * held or a token checked, `@discordjs/ws` when a bot's gateway opens. A server with no Discord bot
 * never loads them.
 */
export const discordRest = new LazyLibrary('@discordjs/rest', () => import('@discordjs/rest'));
export const discordWs = new LazyLibrary('@discordjs/ws', () => import('@discordjs/ws'));
export const discordCollection = new LazyLibrary('@discordjs/collection', () => import('@discordjs/collection'));

/** Discord answered 4xx (or 5xx once the library stopped retrying) with its JSON error. */
export const isDiscordApiError = (err: unknown): err is DiscordAPIError => discordRest.instanceOf(err, (lib) => lib.DiscordAPIError);

/** Discord answered a 5xx without a JSON error. */
export const isDiscordHttpError = (err: unknown): err is HTTPError => discordRest.instanceOf(err, (lib) => lib.HTTPError);

/** A rate limit the client was told to reject on rather than wait out. */
export const isDiscordRateLimitError = (err: unknown): err is RateLimitError => discordRest.instanceOf(err, (lib) => lib.RateLimitError);
