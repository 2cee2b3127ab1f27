import { LRUCache } from 'lru-cache';
import type { ApiKeyRecord, ProjectsStore } from '../../store/projects.store.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { hashKeySecret, looksLikeKeySecret } from './api-key-secret.js';

export interface Principal {
  keyId: string;
  projectId: string;
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
  key.revokedAt ? fail('UNAUTHORIZED', 'Invalid or revoked API key') : ok({ keyId: key.id, projectId: key.projectId });

/**
 * Resolves bearer tokens to keys. Found keys are cached for `cacheTtlMs` so the hot path does not
 * pay a database round trip per request; `invalidate` drops a key at once (revocation). Unknown
 * hashes are not cached: guessing is throttled by the per-IP limit instead of filling memory.
 */
export class AuthService {
  private readonly cache: LRUCache<string, ApiKeyRecord> | null;

  constructor(
    private readonly store: ProjectsStore,
    cacheTtlMs: number,
  ) {
    this.cache = cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: cacheTtlMs }) : null;
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
      key = (await this.store.findKeyByHash(hash)) ?? undefined;
      if (key) this.cache?.set(hash, key);
    }
    return key ? verdictOf(key) : fail('UNAUTHORIZED', 'Invalid or revoked API key');
  }

  /** A key may act only on its own project; anything else (other or unknown project) is 403. */
  authorize(principal: Principal, projectId: string): AppError | null {
    return principal.projectId === projectId
      ? null
      : new AppError('FORBIDDEN', 'This API key does not have access to this project');
  }

  invalidate(keyHash?: string): void {
    if (keyHash) this.cache?.delete(keyHash);
    else this.cache?.clear();
  }
}
