import { and, eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { webhooks } from './schema.js';

export interface WebhookRecord {
  id: string;
  projectId: string;
  url: string;
  secret: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export class WebhooksStore {
  constructor(private readonly db: Db) {}

  async create(input: { projectId: string; url: string; secret: string }): Promise<WebhookRecord> {
    const [row] = await this.db.insert(webhooks).values(input).returning();
    return row!;
  }

  /** Deletes a project's webhook; false when the project has no webhook with that id. */
  async delete(projectId: string, webhookId: string): Promise<boolean> {
    const rows = await this.db
      .delete(webhooks)
      .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, webhookId)))
      .returning({ id: webhooks.id });
    return rows.length > 0;
  }
}
