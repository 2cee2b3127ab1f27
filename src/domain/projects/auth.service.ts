import { LRUCache } from 'lru-cache';
import type { ApiKeyRecord, ProjectsStore } from '../../store/projects.store.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { hashKeySecret, looksLikeKeySecret } from './api-key-secret.js';

export interface Principal {
  keyId: string;
  projectId: string;
}

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

  /** Checks an `Authorization` header value. Every failure is the same 401 to the client. */
  async authenticate(header: string | undefined): Promise<Result<Principal>> {
    const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (!header) return fail('UNAUTHORIZED', 'Missing Authorization header; send "Authorization: Bearer <api key>"');
    if (!match || !looksLikeKeySecret(match[1]!)) {
      return fail('UNAUTHORIZED', 'Malformed Authorization header; send "Authorization: Bearer <api key>"');
    }
    const hash = hashKeySecret(match[1]!);
    let key = this.cache?.get(hash);
    if (!key) {
      key = (await this.store.findKeyByHash(hash)) ?? undefined;
      if (key) this.cache?.set(hash, key);
    }
    if (!key || key.revokedAt) return fail('UNAUTHORIZED', 'Invalid or revoked API key');
    return ok({ keyId: key.id, projectId: key.projectId });
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
