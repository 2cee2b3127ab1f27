/**
 * What an API key may do in its project (docs/api-keys-settings-users.md, "Scopes: full and read keys"): a `full` key anything, a `read`
 * key only what reads, so a key handed to a dashboard or a reporting job cannot change the
 * project, mint keys (each with its own rate-limit budget) or revoke the owner's keys. Keys made
 * before scopes existed are full.
 */

export const API_KEY_SCOPES = ['full', 'read'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
export const DEFAULT_KEY_SCOPE: ApiKeyScope = 'full';

/** HEAD is a GET without its body: Fastify answers it from the GET route. */
const READING_METHODS = new Set(['GET', 'HEAD']);

/**
 * Whether a key of `scope` may call a route answering `method`. `reads` marks a route that only
 * reads although it is not a GET (minting a live-updates token, which lets its holder receive the
 * project's events and nothing else; a read key may open that socket itself).
 */
export function scopeAllows(scope: ApiKeyScope, method: string, reads: boolean): boolean {
  return scope === 'full' || reads || READING_METHODS.has(method);
}
