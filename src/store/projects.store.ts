import { eq, sql } from 'drizzle-orm';
import type { ApiKeyScope } from '../domain/projects/api-key-scope.js';
import type { Db } from '../database/db.js';
import { apiKeys, projects } from './schema.js';

export interface ProjectRecord {
  id: string;
  name: string;
  createdAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  projectId: string;
  label: string | null;
  lastFour: string;
  scope: ApiKeyScope;
  createdAt: Date;
  createdBy: string | null;
  updatedAt: Date;
  updatedBy: string | null;
  revokedAt: Date | null;
  revokedBy: string | null;
}

/** A project as the API and CLI see it (the row also holds the outbox's flags, schema/projects.ts). */
const projectColumns = { id: projects.id, name: projects.name, createdAt: projects.createdAt };

/** Projects and their API keys. Keys are stored as a SHA-256 hash and their last four characters. */
export class ProjectsStore {
  constructor(private readonly db: Db) {}

  async createProject(name: string): Promise<ProjectRecord> {
    const [row] = await this.db.insert(projects).values({ name }).returning(projectColumns);
    return row!;
  }

  async getProject(id: string): Promise<ProjectRecord | null> {
    const [row] = await this.db.select(projectColumns).from(projects).where(eq(projects.id, id));
    return row ?? null;
  }

  async countProjects(): Promise<number> {
    const [row] = await this.db.select({ n: sql<number>`count(*)::int` }).from(projects);
    return row?.n ?? 0;
  }

  /** Issues a full key, whatever the project has: the operator's way in (the CLI, the demo project). */
  async insertKey(input: {
    projectId: string;
    keyHash: string;
    lastFour: string;
    label: string | null;
    createdBy: string;
  }): Promise<ApiKeyRecord> {
    const [row] = await this.db
      .insert(apiKeys)
      .values({ ...input, updatedBy: input.createdBy })
      .returning();
    const { keyHash: _hash, ...record } = row!;
    return record;
  }

  /** The key whose secret hashes to `keyHash`, revoked or not; null when there is none. */
  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash));
    if (!row) return null;
    const { keyHash: _hash, ...record } = row;
    return record;
  }

  async revokeKey(keyId: string, revokedBy: string): Promise<void> {
    await this.db
      .update(apiKeys)
      .set({ revokedAt: sql`now()`, revokedBy, updatedAt: sql`now()`, updatedBy: revokedBy })
      .where(eq(apiKeys.id, keyId));
  }
}
