import { and, count, desc, eq, isNull, ne, sql } from 'drizzle-orm';
import type { ApiKeyScope } from '../domain/projects/api-key-scope.js';
import type { Db } from '../database/db.js';
import type { ApiKeyRecord } from './projects.store.js';
import { apiKeys, projects } from './schema.js';

/**
 * Issuing (through the API, within the project's cap), listing and revoking a project's API keys.
 * The operator's keys (CLI, demo project) are issued by ProjectsStore.insertKey.
 *
 * A revocation announces the key's id on REVOCATIONS_CHANNEL with `pg_notify` inside its own
 * transaction, so every node hears it at commit (never for a rolled-back revocation) and drops
 * the key from its auth cache at once instead of honouring it until the cache TTL runs out.
 */

export const REVOCATIONS_CHANNEL = 'tenure_api_key_revocations';

/** Every column but the hash: nothing outside authentication ever reads it. */
const metadataColumns = {
  id: apiKeys.id,
  projectId: apiKeys.projectId,
  label: apiKeys.label,
  lastFour: apiKeys.lastFour,
  scope: apiKeys.scope,
  createdAt: apiKeys.createdAt,
  createdBy: apiKeys.createdBy,
  updatedAt: apiKeys.updatedAt,
  updatedBy: apiKeys.updatedBy,
  revokedAt: apiKeys.revokedAt,
  revokedBy: apiKeys.revokedBy,
};

export type Revocation<E> = { revoked: ApiKeyRecord } | { refused: E } | null;

export interface NewApiKey {
  projectId: string;
  keyHash: string;
  lastFour: string;
  label: string;
  scope: ApiKeyScope;
  createdBy: string;
}

export class ApiKeysStore {
  constructor(private readonly db: Db) {}

  /**
   * Issues a key unless the project already has `max` active (not revoked) ones; null when it
   * has. The project row is locked first, as revocations lock it, so that concurrent creations
   * count each other: each statement after the lock sees what committed before it.
   */
  async insertWithin(input: NewApiKey, max: number): Promise<ApiKeyRecord | null> {
    return this.db.transaction(async (tx) => {
      await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, input.projectId)).for('no key update');
      const [active] = await tx
        .select({ n: count() })
        .from(apiKeys)
        .where(and(eq(apiKeys.projectId, input.projectId), isNull(apiKeys.revokedAt)));
      if ((active?.n ?? 0) >= max) return null;
      const [row] = await tx
        .insert(apiKeys)
        .values({ ...input, updatedBy: input.createdBy })
        .returning(metadataColumns);
      return row!;
    });
  }

  /** Newest first, ties broken by id so pages are stable; revoked keys included. */
  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: ApiKeyRecord[]; total: number }> {
    const [items, [counted]] = await Promise.all([
      this.db
        .select(metadataColumns)
        .from(apiKeys)
        .where(eq(apiKeys.projectId, projectId))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db.select({ n: count() }).from(apiKeys).where(eq(apiKeys.projectId, projectId)),
    ]);
    return { items, total: counted?.n ?? 0 };
  }

  /**
   * Revokes a key of the project unless `refuse` objects, given the key and how many OTHER keys of
   * the project are still active, full ones apart. The project row is locked first, so two
   * concurrent revocations of a project's last two keys are decided one after the other (the
   * second sees the first). Null when the project has no such key.
   */
  async revoke<E>(
    projectId: string,
    keyId: string,
    revokedBy: string,
    refuse: (key: ApiKeyRecord, others: { active: number; full: number }) => E | null,
  ): Promise<Revocation<E>> {
    return this.db.transaction(async (tx) => {
      await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for('update');
      const [key] = await tx
        .select(metadataColumns)
        .from(apiKeys)
        .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId)));
      if (!key) return null;
      const [others] = await tx
        .select({ active: count(), full: sql<number>`count(*) FILTER (WHERE ${apiKeys.scope} = 'full')::int` })
        .from(apiKeys)
        .where(and(eq(apiKeys.projectId, projectId), ne(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
      const refused = refuse(key, { active: others?.active ?? 0, full: others?.full ?? 0 });
      if (refused !== null) return { refused };
      const [revoked] = await tx
        .update(apiKeys)
        .set({ revokedAt: sql`now()`, revokedBy, updatedAt: sql`now()`, updatedBy: revokedBy })
        .where(eq(apiKeys.id, keyId))
        .returning(metadataColumns);
      await tx.execute(sql`SELECT pg_notify(${REVOCATIONS_CHANNEL}, ${keyId}::text)`);
      return { revoked: revoked! };
    });
  }
}
