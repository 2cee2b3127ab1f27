import type { ApiKeysStore } from '../../store/api-keys.store.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import type { AuthService } from './auth.service.js';
import { toKeyMetadata, type ApiKeyMetadata, type ProjectsService } from './projects.service.js';

/**
 * The keys API (reference.md "Integrations: API keys"). Issuing goes through ProjectsService, which
 * the CLI shares; revocation is immediate on every node (see ApiKeysStore and the revocation listener).
 */
export class ApiKeysService {
  constructor(
    private readonly store: ApiKeysStore,
    private readonly projects: ProjectsService,
    private readonly auth: AuthService,
  ) {}

  /** `createdBy` is the id of the calling key ("cli" from the CLI). */
  create(projectId: string, label: string, createdBy: string): Promise<Result<{ key: string; metadata: ApiKeyMetadata }>> {
    const trimmed = label.trim();
    if (!trimmed) return Promise.resolve(fail('VALIDATION_ERROR', 'label must be 1 to 200 characters'));
    return this.projects.createKey(projectId, trimmed, createdBy);
  }

  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: ApiKeyMetadata[]; total: number }> {
    const found = await this.store.list(projectId, page);
    return { items: found.items.map(toKeyMetadata), total: found.total };
  }

  /**
   * Revokes a key. Refused with 409 when it is already revoked (revocation is permanent, and a
   * repeat must not move `revoked_at`) or when it is the project's last active key: a project must
   * never lock itself out, so a replacement is created first.
   */
  async revoke(projectId: string, keyId: string, revokedBy: string): Promise<Result<ApiKeyMetadata>> {
    const outcome = await this.store.revoke(projectId, keyId, revokedBy, (key, otherActive) => {
      if (key.revokedAt) return new AppError('CONFLICT', 'API key is already revoked');
      if (otherActive === 0) {
        return new AppError('CONFLICT', "Cannot revoke the project's last active API key; create another key first");
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
