import type { ApiKeyRecord, ProjectRecord, ProjectsStore } from '../../store/projects.store.js';
import { fail, ok, type Result } from '../errors.js';
import { isUuid } from '../ids.js';
import type { ApiKeyScope } from './api-key-scope.js';
import { generateKeySecret, hashKeySecret } from './api-key-secret.js';

/** The statements of ProjectsStore this uses (a narrow port: tests give it a small twin). */
export type ProjectsStatements = Pick<ProjectsStore, 'countProjects' | 'createProject' | 'getProject' | 'insertKey'>;

export interface ApiKeyMetadata {
  id: string;
  label: string | null;
  last_four: string;
  created_at: string;
  created_by: string | null;
  updated_at: string;
  updated_by: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  /** `full` or `read` (api-key-scope.ts); an addition to the reference's metadata. */
  scope: ApiKeyScope;
}

export const toKeyMetadata = (k: ApiKeyRecord): ApiKeyMetadata => ({
  id: k.id,
  label: k.label,
  last_four: k.lastFour,
  created_at: k.createdAt.toISOString(),
  created_by: k.createdBy,
  updated_at: k.updatedAt.toISOString(),
  updated_by: k.updatedBy,
  revoked_at: k.revokedAt?.toISOString() ?? null,
  revoked_by: k.revokedBy,
  scope: k.scope,
});

/** Projects and key issuance (the operator CLI and, later, the keys API). */
export class ProjectsService {
  constructor(private readonly store: ProjectsStatements) {}

  get(projectId: string): Promise<ProjectRecord | null> {
    return this.store.getProject(projectId);
  }

  count(): Promise<number> {
    return this.store.countProjects();
  }

  async createProject(name: string): Promise<Result<{ id: string; name: string; created_at: string }>> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 200) return fail('VALIDATION_ERROR', 'name must be 1 to 200 characters');
    const p: ProjectRecord = await this.store.createProject(trimmed);
    return ok({ id: p.id, name: p.name, created_at: p.createdAt.toISOString() });
  }

  /**
   * Issues a full key for the operator (the CLI, the demo project); the secret is returned here
   * once and never stored. Not bound by the project's key cap: it is how an operator gets back into
   * a project whose keys all leaked (the API's keys are issued by ApiKeysService).
   */
  async createKey(
    projectId: string,
    label: string | null,
    createdBy: string,
  ): Promise<Result<{ key: string; metadata: ApiKeyMetadata }>> {
    if (!isUuid(projectId) || !(await this.store.getProject(projectId))) return fail('NOT_FOUND', `Project not found: ${projectId}`);
    if (label !== null && label.length > 200) return fail('VALIDATION_ERROR', 'label must be at most 200 characters');
    const secret = generateKeySecret();
    const record = await this.store.insertKey({
      projectId,
      keyHash: hashKeySecret(secret),
      lastFour: secret.slice(-4),
      label,
      createdBy,
    });
    return ok({ key: secret, metadata: toKeyMetadata(record) });
  }
}
