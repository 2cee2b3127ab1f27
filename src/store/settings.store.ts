import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../database/db.js';
import { settings } from './schema.js';

/** Project settings: one row per key that was ever set; unset keys have their default (domain). */
export class SettingsStore {
  constructor(private readonly db: Db) {}

  async all(projectId: string): Promise<Map<string, unknown>> {
    const rows = await this.db.select({ key: settings.key, value: settings.value }).from(settings).where(eq(settings.projectId, projectId));
    return new Map(rows.map((r) => [r.key, r.value]));
  }

  async get(projectId: string, key: string): Promise<{ value: unknown } | null> {
    const [row] = await this.db
      .select({ value: settings.value })
      .from(settings)
      .where(and(eq(settings.projectId, projectId), eq(settings.key, key)));
    return row ?? null;
  }

  /** Sets every entry in ONE statement: the batch lands whole or not at all. */
  async setMany(projectId: string, entries: readonly [string, unknown][]): Promise<void> {
    if (entries.length === 0) return;
    await this.db
      .insert(settings)
      // A setting may be null (no logo): stored as JSON null, since the column itself is NOT NULL.
      .values(entries.map(([key, value]) => ({ projectId, key, value: value === null ? sql`'null'::jsonb` : value })))
      .onConflictDoUpdate({
        target: [settings.projectId, settings.key],
        set: { value: sql`excluded.value`, updatedAt: sql`now()` },
      });
  }
}
