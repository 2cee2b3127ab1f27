import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { at, iso } from '../database/sql.js';

/**
 * A project's merchant accounts (`merchant_accounts`, docs/payments.md "Connecting Stripe"): one
 * per (project, provider, environment), its secrets sealed by the secret box. What the API shows is
 * read without the secrets; the services that call the provider read them with `secretsOf`.
 */

/** A merchant account as the API shows it (never a secret). */
export interface MerchantAccountRecord {
  id: string;
  provider: string;
  environment: string;
  providerAccountId: string;
  providerAccountName: string | null;
  webhookSecretSet: boolean;
  /** `YYYY-MM-DDTHH:MM:SS.mmmZ` */
  createdAt: string;
  updatedAt: string;
}

/** An account's sealed secrets, for a call to the provider or a check of its webhook signature. */
export interface MerchantAccountSecrets {
  id: string;
  projectId: string;
  provider: string;
  environment: string;
  secretKeySealed: string;
  webhookSecretSealed: string | null;
  /** The provider's id of the account the key belongs to (Stripe `acct_…`). */
  providerAccountId: string;
}

/** An account as connected: its sealed secrets (no id yet) and the provider account's name. */
export interface NewMerchantAccount extends Omit<MerchantAccountSecrets, 'id'> {
  /** Null keeps the stored one, unless the key now belongs to another provider account. */
  webhookSecretSealed: string | null;
  providerAccountName: string | null;
}

const RECORD = (alias: string) =>
  sql.raw(`${alias}.id, ${alias}.provider, ${alias}.environment, ${alias}.provider_account_id AS "providerAccountId",
    ${alias}.provider_account_name AS "providerAccountName", (${alias}.webhook_secret_sealed IS NOT NULL) AS "webhookSecretSet"`);
const INSTANTS = (alias: string) => sql`${iso(sql.raw(`${alias}.created_at`))} AS "createdAt", ${iso(sql.raw(`${alias}.updated_at`))} AS "updatedAt"`;

export class MerchantAccountsStore {
  constructor(private readonly db: Db) {}

  /**
   * Stores the account, or replaces the key of the project's account of that provider and
   * environment (its id, and so its webhook path, stay). A webhook secret left out is kept,
   * unless the key belongs to another provider account now: that account's endpoint signs with
   * another secret.
   */
  async upsert(a: NewMerchantAccount, now: Date): Promise<{ record: MerchantAccountRecord; created: boolean }> {
    const nowAt = at(now);
    const result = await this.db.execute(sql`
      INSERT INTO merchant_accounts AS m (project_id, provider, environment, secret_key_sealed, webhook_secret_sealed,
        provider_account_id, provider_account_name, created_at, updated_at)
      VALUES (${a.projectId}, ${a.provider}, ${a.environment}, ${a.secretKeySealed}, ${a.webhookSecretSealed},
        ${a.providerAccountId}, ${a.providerAccountName}, ${nowAt}, ${nowAt})
      ON CONFLICT (project_id, provider, environment) DO UPDATE SET
        secret_key_sealed = excluded.secret_key_sealed,
        webhook_secret_sealed = CASE
          WHEN excluded.webhook_secret_sealed IS NOT NULL THEN excluded.webhook_secret_sealed
          WHEN m.provider_account_id = excluded.provider_account_id THEN m.webhook_secret_sealed
          ELSE NULL END,
        provider_account_id = excluded.provider_account_id,
        provider_account_name = excluded.provider_account_name,
        updated_at = excluded.updated_at
      RETURNING ${RECORD('m')}, ${INSTANTS('m')}, (xmax = 0) AS created`);
    const { created, ...record } = rowsOf<MerchantAccountRecord & { created: boolean }>(result)[0]!;
    return { record, created };
  }

  /** Newest first, as every list (docs/idempotency-and-lists.md), ties broken by id. */
  async list(projectId: string): Promise<{ items: MerchantAccountRecord[]; total: number }> {
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        SELECT ${RECORD('m')}, ${INSTANTS('m')} FROM merchant_accounts m WHERE m.project_id = ${projectId}
        ORDER BY m.created_at DESC, m.id DESC`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM merchant_accounts WHERE project_id = ${projectId}`),
    ]);
    return { items: rowsOf<MerchantAccountRecord>(items), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }

  async get(projectId: string, id: string): Promise<MerchantAccountRecord | null> {
    const result = await this.db.execute(sql`
      SELECT ${RECORD('m')}, ${INSTANTS('m')} FROM merchant_accounts m WHERE m.project_id = ${projectId} AND m.id = ${id}`);
    return rowsOf<MerchantAccountRecord>(result)[0] ?? null;
  }

  /** Deletes the account and its sealed secrets; its payments stay, without the account. */
  async delete(projectId: string, id: string): Promise<boolean> {
    const result = await this.db.execute(sql`DELETE FROM merchant_accounts WHERE project_id = ${projectId} AND id = ${id} RETURNING id`);
    return rowsOf(result).length > 0;
  }

  /** The account's secrets by its id alone (the webhook route knows no project); null when there is none. */
  async secretsOf(id: string): Promise<MerchantAccountSecrets | null> {
    const result = await this.db.execute(sql`
      SELECT id, project_id AS "projectId", provider, environment, secret_key_sealed AS "secretKeySealed",
        webhook_secret_sealed AS "webhookSecretSealed", provider_account_id AS "providerAccountId"
      FROM merchant_accounts WHERE id = ${id}`);
    return rowsOf<MerchantAccountSecrets>(result)[0] ?? null;
  }

  /**
   * The project's account of `provider` that checkout uses: the one given by id, or else its
   * production account if it has one, its sandbox account otherwise.
   */
  async forCheckout(projectId: string, provider: string, id: string | null): Promise<MerchantAccountSecrets | null> {
    const result = await this.db.execute(sql`
      SELECT id, project_id AS "projectId", provider, environment, secret_key_sealed AS "secretKeySealed",
        webhook_secret_sealed AS "webhookSecretSealed", provider_account_id AS "providerAccountId"
      FROM merchant_accounts WHERE project_id = ${projectId} AND provider = ${provider}
        AND (${id}::uuid IS NULL OR id = ${id}::uuid)
      ORDER BY (environment = 'production') DESC LIMIT 1`);
    return rowsOf<MerchantAccountSecrets>(result)[0] ?? null;
  }

  /**
   * Claims up to `limit` Stripe accounts whose reconciliation is due (never done, or last begun
   * `intervalMs` ago), oldest first, marking them begun now: another worker process skips them
   * (SKIP LOCKED) and finds them marked once this commits.
   */
  async claimDueForReconcile(now: Date, intervalMs: number, limit: number): Promise<(MerchantAccountSecrets & { reconciledThrough: Date | null; createdAt: Date })[]> {
    const nowAt = at(now);
    const result = await this.db.execute(sql`
      WITH due AS (
        SELECT id FROM merchant_accounts
        WHERE provider = 'stripe' AND (reconciled_at IS NULL OR reconciled_at <= ${nowAt} - ${intervalMs} * interval '1 millisecond')
        ORDER BY reconciled_at NULLS FIRST, id LIMIT ${limit} FOR UPDATE SKIP LOCKED
      )
      UPDATE merchant_accounts m SET reconciled_at = ${nowAt} FROM due WHERE m.id = due.id
      RETURNING m.id, m.project_id AS "projectId", m.provider, m.environment, m.secret_key_sealed AS "secretKeySealed",
        m.webhook_secret_sealed AS "webhookSecretSealed", m.provider_account_id AS "providerAccountId", ${iso(sql`m.reconciled_through`)} AS "reconciledThrough", ${iso(sql`m.created_at`)} AS "createdAt"`);
    return rowsOf<MerchantAccountSecrets & { reconciledThrough: string | null; createdAt: string }>(result).map((r) => ({
      ...r,
      reconciledThrough: r.reconciledThrough ? new Date(r.reconciledThrough) : null,
      createdAt: new Date(r.createdAt),
    }));
  }

  /** Stripe's events up to `through` have been listed and applied for the account. */
  async markReconciled(id: string, through: Date): Promise<void> {
    await this.db.execute(sql`UPDATE merchant_accounts SET reconciled_through = greatest(reconciled_through, ${at(through)}) WHERE id = ${id}`);
  }
}
