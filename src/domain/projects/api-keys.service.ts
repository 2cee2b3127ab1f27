import type { ApiKeysStore } from '../../store/api-keys.store.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { DEFAULT_KEY_SCOPE, type ApiKeyScope } from './api-key-scope.js';
import { generateKeySecret, hashKeySecret } from './api-key-secret.js';
import type { AuthService } from './auth.service.js';
import { toKeyMetadata, type ApiKeyMetadata } from './projects.service.js';

/** The statements of ApiKeysStore this uses (a narrow port: tests give it a small twin). */
export type ApiKeysStatements = Pick<ApiKeysStore, 'insertWithin' | 'list' | 'revoke'>;

export interface ApiKeysOptions {
  /** Active keys a project may have (TENURE_MAX_KEYS_PER_PROJECT). */
  maxPerProject: number;
}

/**
 * The keys API (docs/api-keys-settings-users.md, "API keys"). Revocation is immediate on every node (see
 * ApiKeysStore and the revocation listener). Every key has its own rate-limit budget, so a project
 * may hold only `maxPerProject` active keys: minting keys must not multiply its limits.
 */
export class ApiKeysService {
  constructor(
    private readonly store: ApiKeysStatements,
    private readonly auth: AuthService,
    private readonly options: ApiKeysOptions,
  ) {}

  /**
   * Issues a key, full unless `scope` says otherwise; `createdBy` is the id of the calling key. The
   * secret is returned here once and never stored. 409 when the project is at its cap.
   */
  async create(
    projectId: string,
    input: { label: string; scope?: ApiKeyScope },
    createdBy: string,
  ): Promise<Result<{ key: string; metadata: ApiKeyMetadata }>> {
    const label = input.label.trim();
    if (!label) return fail('VALIDATION_ERROR', 'label must be 1 to 200 characters');
    const secret = generateKeySecret();
    const { maxPerProject } = this.options;
    const record = await this.store.insertWithin(
      { projectId, keyHash: hashKeySecret(secret), lastFour: secret.slice(-4), label, scope: input.scope ?? DEFAULT_KEY_SCOPE, createdBy },
      maxPerProject,
    );
    if (!record) {
      return fail('CONFLICT', `This project already has ${maxPerProject} active API keys, the most it may have; revoke one first`);
    }
    return ok({ key: secret, metadata: toKeyMetadata(record) });
  }

  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: ApiKeyMetadata[]; total: number }> {
    const found = await this.store.list(projectId, page);
    return { items: found.items.map(toKeyMetadata), total: found.total };
  }

  /**
   * Revokes a key. Refused with 409 when it is already revoked (revocation is permanent, and a
   * repeat must not move `revoked_at`), or when it is the project's last active key or last active
   * full key: a project must never lock itself out (with read keys alone it could not make a key
   * again), so a replacement is created first.
   */
  async revoke(projectId: string, keyId: string, revokedBy: string): Promise<Result<ApiKeyMetadata>> {
    const outcome = await this.store.revoke(projectId, keyId, revokedBy, (key, others) => {
      if (key.revokedAt) return new AppError('CONFLICT', 'API key is already revoked');
      if (others.active === 0) {
        return new AppError('CONFLICT', "Cannot revoke the project's last active API key; create another key first");
      }
      if (key.scope === 'full' && others.full === 0) {
        return new AppError('CONFLICT', "Cannot revoke the project's last active full API key; create another full key first");
      }
      return null;
    });
    if (outcome === null) return fail('NOT_FOUND', 'API key not found');
    if ('refused' in outcome) return { ok: false, error: outcome.refused };
    // This node forgets the key before answering; the others hear the store's notification.
    this.auth.invalidateKeyId(keyId);
    return ok(toKeyMetadata(outcome.revoked));
  }
}
