import { LRUCache } from 'lru-cache';
import type { ApiKeyRecord, ProjectsStore } from '../../store/projects.store.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { scopeAllows, type ApiKeyScope } from './api-key-scope.js';
import { hashKeySecret, looksLikeKeySecret } from './api-key-secret.js';

/** The statements of ProjectsStore this uses (a narrow port: tests give it a small twin). */
export type KeyLookupStatements = Pick<ProjectsStore, 'findKeyByHash'>;

export interface Principal {
  keyId: string;
  projectId: string;
  scope: ApiKeyScope;
}

/** The SHA-256 hash of a well-formed bearer key, or the 401 for a missing or malformed header. */
function parseBearer(header: string | undefined): Result<string> {
  if (!header) return fail('UNAUTHORIZED', 'Missing Authorization header; send "Authorization: Bearer <api key>"');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || !looksLikeKeySecret(match[1]!)) {
    return fail('UNAUTHORIZED', 'Malformed Authorization header; send "Authorization: Bearer <api key>"');
  }
  return ok(hashKeySecret(match[1]!));
}

const verdictOf = (key: ApiKeyRecord): Result<Principal> =>
  key.revokedAt ? fail('UNAUTHORIZED', 'Invalid or revoked API key') : ok({ keyId: key.id, projectId: key.projectId, scope: key.scope });

/**
 * Keys the cache holds at most, least recently used dropped first: a flood of distinct valid keys
 * costs at most this many records in memory (docs/memory.md, "Bounds").
 */
export const KEY_CACHE_ENTRIES = 10_000;

/**
 * Resolves bearer tokens to keys. Found keys are cached for `cacheTtlMs` so the hot path does not
 * pay a database round trip per request; `invalidate` drops a key at once (revocation). Unknown
 * hashes are not cached: guessing is throttled by the per-IP limit instead of filling memory.
 */
export class AuthService {
  private readonly cache: LRUCache<string, ApiKeyRecord> | null;
  /**
   * Bumped by every invalidation. A lookup that read the database before a revocation landed
   * must not put its stale record into the cache after the revocation evicted it.
   */
  private generation = 0;

  constructor(
    private readonly store: KeyLookupStatements,
    cacheTtlMs: number,
  ) {
    this.cache = cacheTtlMs > 0 ? new LRUCache({ max: KEY_CACHE_ENTRIES, ttl: cacheTtlMs }) : null;
  }

  /** Keys in the cache now (at most KEY_CACHE_ENTRIES). */
  get cachedKeys(): number {
    return this.cache?.size ?? 0;
  }

  /**
   * Answers without the database when it can: a missing or malformed header, or a cached key.
   * Returns undefined when the key must be looked up (`authenticate`).
   */
  peek(header: string | undefined): Result<Principal> | undefined {
    const parsed = parseBearer(header);
    if (!parsed.ok) return parsed;
    const key = this.cache?.get(parsed.value);
    return key ? verdictOf(key) : undefined;
  }

  /** Checks an `Authorization` header value. Every failure is the same 401 to the client. */
  async authenticate(header: string | undefined): Promise<Result<Principal>> {
    const parsed = parseBearer(header);
    if (!parsed.ok) return parsed;
    const hash = parsed.value;
    let key = this.cache?.get(hash);
    if (!key) {
      const generation = this.generation;
      key = (await this.store.findKeyByHash(hash)) ?? undefined;
      if (key && generation === this.generation) this.cache?.set(hash, key);
    }
    return key ? verdictOf(key) : fail('UNAUTHORIZED', 'Invalid or revoked API key');
  }

  /** A key may act only on its own project; anything else (other or unknown project) is 403. */
  authorize(principal: Principal, projectId: string): AppError | null {
    return principal.projectId === projectId
      ? null
      : new AppError('FORBIDDEN', 'This API key does not have access to this project');
  }

  /**
   * A read key may only read (api-key-scope.ts); anything else is 403, decided with project access
   * and so before the body is validated or anything runs. `reads` marks a route that only reads
   * although it is not a GET.
   */
  authorizeScope(principal: Principal, method: string, reads: boolean): AppError | null {
    return scopeAllows(principal.scope, method, reads)
      ? null
      : new AppError('FORBIDDEN', 'This API key is read-only; use a full key to create, change or delete anything');
  }

  invalidate(keyHash?: string): void {
    this.generation++;
    if (keyHash) this.cache?.delete(keyHash);
    else this.cache?.clear();
  }

  /**
   * Drops the key with this id from the cache (a revocation, announced by id so no secret
   * derivative travels in notifications). Revocations are rare; a scan of the cache is fine.
   */
  invalidateKeyId(keyId: string): void {
    this.generation++;
    if (!this.cache) return;
    const hashes: string[] = [];
    this.cache.forEach((key, hash) => {
      if (key.id === keyId) hashes.push(hash);
    });
    for (const hash of hashes) this.cache.delete(hash);
  }
}
