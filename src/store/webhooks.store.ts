import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { isSealed, SEALED_PREFIX, type StoredSecrets } from '../domain/webhooks/webhook-secrets.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { webhooks } from './schema.js';

/** A webhook as the services read it: never its secrets (the worker reads them with its claim). */
export interface WebhookRecord {
  id: string;
  projectId: string;
  url: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
}

const recordColumns = {
  id: webhooks.id,
  projectId: webhooks.projectId,
  url: webhooks.url,
  enabled: webhooks.enabled,
  createdAt: webhooks.createdAt,
  updatedAt: webhooks.updatedAt,
  previousSecretExpiresAt: webhooks.previousSecretExpiresAt,
  failingSince: webhooks.failingSince,
  disabledAt: webhooks.disabledAt,
  disabledReason: webhooks.disabledReason,
};

/** A stored secret that is not sealed yet (src/domain/webhooks/webhook-secrets.ts). */
const unsealed = (column: SQL) => sql`${column} NOT LIKE ${`${SEALED_PREFIX}%`}`;

/**
 * Drizzle's query errors quote every parameter in their message, and a failed request's error is
 * logged: where a parameter is a secret, rethrow without them (the driver's error stays as the
 * cause, so a connection failure is still recognised as one).
 */
async function hidingParams<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (err) {
    const e = err as { query?: unknown; params?: unknown; cause?: unknown };
    if (typeof e.query === 'string' && e.params !== undefined) throw new Error(`Failed query: ${e.query}`, { cause: e.cause });
    throw err;
  }
}

export class WebhooksStore implements StoredSecrets {
  constructor(private readonly db: Db) {}

  /**
   * Inserts a webhook unless the project already has `max`. The project row is locked first so
   * that concurrent creations count each other (each statement of the transaction sees what
   * committed before it). Null when the project is at `max`.
   */
  async createWithin(input: { projectId: string; url: string; storedSecret: string }, max: number): Promise<WebhookRecord | null> {
    return hidingParams(() => this.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM projects WHERE id = ${input.projectId} FOR NO KEY UPDATE`);
      const [existing] = await tx.select({ n: count() }).from(webhooks).where(eq(webhooks.projectId, input.projectId));
      if ((existing?.n ?? 0) >= max) return null;
      const [row] = await tx
        .insert(webhooks)
        .values({ projectId: input.projectId, url: input.url, secret: input.storedSecret })
        .returning(recordColumns);
      return row!;
    }));
  }

  /** The project's webhooks, counted. */
  async count(projectId: string): Promise<number> {
    const [row] = await this.db.select({ n: count() }).from(webhooks).where(eq(webhooks.projectId, projectId));
    return row?.n ?? 0;
  }

  /** Deletes a project's webhook; false when the project has no webhook with that id. */
  async delete(projectId: string, webhookId: string): Promise<boolean> {
    const rows = await this.db
      .delete(webhooks)
      .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, webhookId)))
      .returning({ id: webhooks.id });
    return rows.length > 0;
  }

  async get(projectId: string, webhookId: string): Promise<WebhookRecord | null> {
    const [row] = await this.db
      .select(recordColumns)
      .from(webhooks)
      .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, webhookId)));
    return row ?? null;
  }

  /** Newest first, ties broken by id so pages are stable. */
  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: WebhookRecord[]; total: number }> {
    const [items, [total]] = await Promise.all([
      this.db
        .select(recordColumns)
        .from(webhooks)
        .where(eq(webhooks.projectId, projectId))
        .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db.select({ n: count() }).from(webhooks).where(eq(webhooks.projectId, projectId)),
    ]);
    return { items, total: total?.n ?? 0 };
  }

  /**
   * Installs a new secret (as stored: sealed when the instance has a key); the current one becomes
   * the previous, signing alongside until `graceUntil`.
   */
  async rotateSecret(projectId: string, webhookId: string, storedSecret: string, now: Date, graceUntil: Date): Promise<WebhookRecord | null> {
    const [row] = await hidingParams(() =>
      this.db
        .update(webhooks)
        .set({ previousSecret: sql`${webhooks.secret}`, previousSecretExpiresAt: graceUntil, secret: storedSecret, updatedAt: now })
        .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, webhookId)))
        .returning(recordColumns),
    );
    return row ?? null;
  }

  async sealUnsealed(seal: (secret: string) => string, limit: number): Promise<number> {
    return hidingParams(() => this.db.transaction(async (tx) => {
      const rows = rowsOf<{ id: string; secret: string; previous_secret: string | null }>(
        await tx.execute(sql`
          SELECT id, secret, previous_secret FROM webhooks
          WHERE ${unsealed(sql`secret`)} OR ${unsealed(sql`previous_secret`)}
          ORDER BY id LIMIT ${limit} FOR UPDATE`),
      );
      if (rows.length === 0) return 0;
      const kept = (stored: string) => (isSealed(stored) ? stored : seal(stored));
      // '' stands for "no previous secret" in the array (never a stored value).
      await tx.execute(sql`
        UPDATE webhooks w SET secret = v.secret, previous_secret = nullif(v.previous_secret, '')
        FROM unnest(${sql.param(rows.map((r) => r.id))}::uuid[], ${sql.param(rows.map((r) => kept(r.secret)))}::text[],
                    ${sql.param(rows.map((r) => (r.previous_secret === null ? '' : kept(r.previous_secret))))}::text[])
          AS v(id, secret, previous_secret)
        WHERE w.id = v.id`);
      return rows.length;
    }));
  }

  async countByKey(): Promise<{ keyId: string | null; webhooks: number }[]> {
    const result = await this.db.execute(sql`
      SELECT CASE WHEN ${unsealed(sql`secret`)} THEN NULL ELSE split_part(secret, '.', 2) END AS key_id, count(*)::int AS webhooks
      FROM webhooks GROUP BY 1`);
    return rowsOf<{ key_id: string | null; webhooks: number }>(result).map((r) => ({ keyId: r.key_id, webhooks: r.webhooks }));
  }

  /**
   * Enables (clearing the failure streak) or disables a webhook; disabling cancels its pending
   * deliveries in the same statement. `reason` is recorded for a disable.
   */
  async setEnabled(projectId: string, webhookId: string, enabled: boolean, now: Date, reason: string): Promise<WebhookRecord | null> {
    const result = await this.db.execute(sql`
      WITH hook AS (
        UPDATE webhooks
        SET enabled = ${enabled}::boolean, updated_at = ${now}::timestamptz, failing_since = NULL,
            disabled_at = CASE WHEN ${enabled}::boolean THEN NULL WHEN enabled THEN ${now}::timestamptz ELSE disabled_at END,
            disabled_reason = CASE WHEN ${enabled}::boolean THEN NULL WHEN enabled THEN ${reason}::text ELSE disabled_reason END
        WHERE project_id = ${projectId} AND id = ${webhookId}
        RETURNING id
      ), cancelled AS (
        UPDATE webhook_deliveries SET status = 'cancelled', leased_by = NULL, updated_at = ${now}::timestamptz, completed_at = ${now}::timestamptz
        WHERE NOT ${enabled}::boolean AND webhook_id IN (SELECT id FROM hook) AND status = 'pending'
      )
      SELECT id FROM hook`);
    if (rowsOf(result).length === 0) return null;
    return this.get(projectId, webhookId);
  }

  /**
   * Writes a `webhook.test` event aimed at one enabled webhook; the fan-out trigger turns it into
   * that webhook's delivery. Returns the event and delivery ids; null when no such enabled webhook.
   */
  async insertTestEvent(projectId: string, webhookId: string, message: string): Promise<{ eventId: string; deliveryId: string } | null> {
    return this.db.transaction(async (tx) => {
      const event = insertEvent('webhook.test', {
        projectId: sql`w.project_id`,
        data: { message: sql<string>`${message}::text`, webhook_id: sql<string>`w.id` },
        targetWebhookId: sql`w.id`,
        from: sql`FROM webhooks w WHERE w.project_id = ${projectId} AND w.id = ${webhookId} AND w.enabled`,
      });
      const inserted = await tx.execute(sql`${event} RETURNING id`);
      const eventId = rowsOf<{ id: string }>(inserted)[0]?.id;
      if (!eventId) return null;
      const delivery = await tx.execute(sql`SELECT id FROM webhook_deliveries WHERE event_id = ${eventId}`);
      return { eventId, deliveryId: rowsOf<{ id: string }>(delivery)[0]!.id };
    });
  }
}
