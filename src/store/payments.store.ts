import { sql, type SQL } from 'drizzle-orm';
import { queueMessage } from './message-queueing.js';
import { fractionDigits } from '../domain/payments/checkout-rules.js';
import type { Failed, Paid, PaymentOf, PaymentStatements } from '../domain/payments/payment-statements.js';
import type { PaymentView } from '../domain/payments/payment.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { at, iso } from '../database/sql.js';
import { afterListKey, keyText, pageOf, type ListKey } from './keyset.js';

/**
 * Payments (docs/payments.md): what a checkout reads of the project, the payments as the API
 * lists them, the payment object the API and the `payment.*` events show, and the statements that
 * record them from the provider's events (StripeEventsService runs them in an event's transaction).
 */

/** Currencies by their number of fraction digits, for the decimal amount (Intl's table, as checkout counts them). */
const CURRENCIES = Intl.supportedValuesOf('currency');
const byDigits = (n: number) => CURRENCIES.filter((c) => /^[A-Z]{3}$/.test(c) && fractionDigits(c) === n).map((c) => `'${c}'`).join(', ');
export const DIGITS_SQL = `CASE WHEN currency IN (${byDigits(0)}) THEN 0 WHEN currency IN (${byDigits(3)}) THEN 3 ELSE 2 END`;

/** The payment object of a relation `alias` with the payments columns, as the API and events show it. */
export const paymentJson = (alias: string) => {
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  const digits = sql.raw(DIGITS_SQL.replaceAll('currency', `${alias}.currency`));
  return sql<PaymentView>`jsonb_build_object(
    'payment_id', ${c('id')}, 'provider', ${c('provider')}, 'merchant_account_id', ${c('merchant_account_id')},
    'user_id', ${c('user_id')}, 'plan_id', ${c('plan_id')},
    'amount', round(${c('amount_minor')}::numeric / power(10::numeric, ${digits}), ${digits})::text, 'amount_minor', ${c('amount_minor')},
    'currency', ${c('currency')}, 'status', ${c('status')}, 'checkout_session_id', ${c('checkout_session_id')},
    'payment_intent_id', ${c('payment_intent_id')}, 'invoice_id', ${c('invoice_id')}, 'subscription_id', ${c('subscription_id')},
    'customer_id', ${c('customer_id')}, 'created_at', ${iso(c('created_at'))}, 'updated_at', ${iso(c('updated_at'))})`;
};

/** The `payment.*` event of each payment row of relation `source`, as a CTE of the statement that wrote them. */
export const paymentEvent = (type: 'payment.succeeded' | 'payment.refunded' | 'payment.disputed' | 'payment.failed', source: string) =>
  insertEvent(type, { projectId: sql`project_id`, data: { payment: paymentJson(source) }, from: sql.raw(`FROM ${source}`) });

/** What `GET /payments` and its export filter by (docs/idempotency-and-lists.md, "Query parameters"). */
export interface PaymentFilter {
  userId?: string;
  status?: string;
  createdBefore?: Date;
  createdAfter?: Date;
}

/** The WHERE of a payments list over `p`. */
export function paymentWhere(projectId: string, filter: PaymentFilter): SQL {
  const conditions: SQL[] = [sql`p.project_id = ${projectId}`];
  if (filter.userId) conditions.push(sql`p.user_id = ${filter.userId}`);
  if (filter.status) conditions.push(sql`p.status = ${filter.status}`);
  // Strict bounds, read from payments_project_created_idx (or payments_member_created_idx with a user).
  if (filter.createdBefore) conditions.push(sql`p.created_at < ${filter.createdBefore.toISOString()}::timestamptz`);
  if (filter.createdAfter) conditions.push(sql`p.created_at > ${filter.createdAfter.toISOString()}::timestamptz`);
  return sql.join(conditions, sql` AND `);
}

export class PaymentsStore implements PaymentStatements {
  constructor(private readonly db: Db) {}

  /** A banned user (docs/api-keys-settings-users.md, "Bans") can get no new membership, so no checkout either. */
  async isBanned(projectId: string, userId: string): Promise<boolean> {
    const result = await this.db.execute(sql`SELECT 1 FROM bans WHERE project_id = ${projectId} AND user_id = ${userId}`);
    return rowsOf(result).length > 0;
  }

  /** The project's payments, newest first, ties broken by id so pages are stable. */
  async list(projectId: string, filter: PaymentFilter & { limit: number; offset: number }): Promise<{ items: PaymentView[]; total: number }> {
    const where = paymentWhere(projectId, filter);
    const [page, count] = await Promise.all([
      this.db.execute(sql`SELECT ${paymentJson('p')} AS payment FROM payments p WHERE ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM payments p WHERE ${where}`),
    ]);
    return { items: rowsOf<{ payment: PaymentView }>(page).map((r) => r.payment), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }

  /** A cursor page of the list (docs/idempotency-and-lists.md, "Cursor pages"): after `after`, no total. */
  async listAfter(projectId: string, filter: PaymentFilter & { limit: number }, after: ListKey | null): Promise<{ items: PaymentView[]; next: ListKey | null }> {
    const result = await this.db.execute(sql`
      SELECT ${paymentJson('p')} AS item, ${keyText(sql.raw('p.created_at'))} AS k, p.id FROM payments p
      WHERE ${paymentWhere(projectId, filter)} AND ${afterListKey('p', 'created_at', 'DESC', after)}
      ORDER BY p.created_at DESC, p.id DESC LIMIT ${filter.limit + 1}`);
    return pageOf(rowsOf<{ k: string; id: string; item: PaymentView }>(result), filter.limit);
  }

  /** The status guard lets one event do it when two race. */
  async succeedFailed(projectId: string, p: Paid, now: Date): Promise<boolean> {
    const retried = rowsOf<{ n: number }>(
      await this.db.execute(sql`
        WITH upd AS (
          UPDATE payments AS p SET status = 'succeeded', amount_minor = ${p.amountMinor}, updated_at = ${at(now)},
            checkout_session_id = coalesce(p.checkout_session_id, ${p.checkoutSessionId}),
            payment_intent_id = coalesce(p.payment_intent_id, ${p.paymentIntentId}),
            customer_id = coalesce(p.customer_id, ${p.customerId})
          WHERE p.project_id = ${projectId}::uuid AND p.provider = 'stripe' AND p.payment_key = ${p.key} AND p.status = 'failed'
          RETURNING p.*
        ), ev AS (${paymentEvent('payment.succeeded', 'upd')})
        SELECT count(*)::int AS n FROM upd`),
    );
    return (retried[0]?.n ?? 0) > 0;
  }

  /** Its `payment.succeeded` is written only by the insert; the plan is kept only if it is the project's. */
  async recordSucceeded(of: PaymentOf, p: Paid, now: Date): Promise<boolean> {
    const nowAt = at(now);
    const recorded = rowsOf<{ inserted: boolean }>(
      await this.db.execute(sql`
        WITH ins AS (
          INSERT INTO payments AS p (project_id, merchant_account_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status,
            checkout_session_id, payment_intent_id, invoice_id, subscription_id, customer_id, created_at, updated_at)
          SELECT ${of.projectId}::uuid, ${of.merchantAccountId}::uuid, 'stripe', ${p.key}, ${of.buyer.userId},
            (SELECT id FROM plans WHERE id = ${of.buyer.planId}::uuid AND project_id = ${of.projectId}::uuid), ${p.amountMinor}, ${p.currency}, 'succeeded',
            ${p.checkoutSessionId}, ${p.paymentIntentId}, ${p.invoiceId}, ${p.subscriptionId}, ${p.customerId}, ${nowAt}, ${nowAt}
          ON CONFLICT (project_id, provider, payment_key) DO UPDATE SET
            checkout_session_id = coalesce(p.checkout_session_id, excluded.checkout_session_id),
            payment_intent_id = coalesce(p.payment_intent_id, excluded.payment_intent_id),
            customer_id = coalesce(p.customer_id, excluded.customer_id)
          RETURNING p.*, (xmax = 0) AS inserted
        ), ev AS (${insertEvent('payment.succeeded', { projectId: sql`project_id`, data: { payment: paymentJson('ins') }, from: sql`FROM ins WHERE inserted` })})
        SELECT inserted FROM ins`),
    );
    return recorded[0]?.inserted ?? false;
  }

  async recordFailed(of: PaymentOf, f: Failed, now: Date): Promise<boolean> {
    const nowAt = at(now);
    const rows = rowsOf(
      await this.db.execute(sql`
        WITH ins AS (
          INSERT INTO payments (project_id, merchant_account_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status,
            invoice_id, subscription_id, customer_id, created_at, updated_at)
          SELECT ${of.projectId}::uuid, ${of.merchantAccountId}::uuid, 'stripe', ${f.key}, ${of.buyer.userId},
            (SELECT id FROM plans WHERE id = ${of.buyer.planId}::uuid AND project_id = ${of.projectId}::uuid), ${f.amountMinor}, ${f.currency}, 'failed',
            ${f.invoiceId}, ${f.subscriptionId}, ${f.customerId}, ${nowAt}, ${nowAt}
          ON CONFLICT (project_id, provider, payment_key) DO NOTHING
          RETURNING *
        ), ev AS (${paymentEvent('payment.failed', 'ins')}),
        -- A renewal's invoice failed: its member is told, with their billing and until when access is kept (docs/lifecycle.md).
        renewing AS (
          SELECT m.id, m.project_id, m.user_id, m.plan_id, i.payment_key FROM ins i
          JOIN memberships m ON m.project_id = i.project_id AND m.user_id = i.user_id AND m.subscription_id = i.subscription_id
          WHERE m.status = 'active'
        ), told AS (${queueMessage('payment_failed', 'renewing', now, sql`'payment-failed:' || d.payment_key`)})
        SELECT id FROM ins`),
    );
    return rows.length > 0;
  }

  async startTrial(t: { projectId: string; userId: string; planId: string; trialDays: number; sessionId: string | null }, now: Date): Promise<boolean> {
    const rows = rowsOf(
      await this.db.execute(sql`
        INSERT INTO trials (project_id, user_id, plan_id, checkout_key, session_id, state, trial_days, created_at, started_at)
        VALUES (${t.projectId}, ${t.userId}, ${t.planId}, '', ${t.sessionId}, 'started', ${t.trialDays}, ${at(now)}, ${at(now)})
        ON CONFLICT (project_id, user_id) DO UPDATE SET state = 'started', started_at = EXCLUDED.started_at,
          session_id = coalesce(trials.session_id, EXCLUDED.session_id)
        WHERE trials.state = 'reserved'
        RETURNING user_id`),
    );
    return rows.length > 0;
  }

  async releaseSessionTrial(projectId: string, sessionId: string): Promise<boolean> {
    const rows = rowsOf(
      await this.db.execute(sql`DELETE FROM trials WHERE project_id = ${projectId} AND session_id = ${sessionId} AND state = 'reserved' RETURNING user_id`),
    );
    return rows.length > 0;
  }

  async rememberEmail(projectId: string, userId: string, email: string): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO users (project_id, user_id, email) VALUES (${projectId}, ${userId}, ${email})
      ON CONFLICT (project_id, user_id) DO UPDATE SET email = EXCLUDED.email`);
  }

  /**
   * Checkout's side of a trial (docs/payments.md, "Trials"): reserves the member's one trial in the
   * project for the checkout `checkoutKey`. True when this checkout holds it (reserved now, or by
   * this same checkout before: a retry); false when the member has or had another trial, which
   * then pays at once. Taken by one insert on the (project, user) key, so two checkouts at once
   * cannot both offer a trial.
   */
  async reserveTrial(t: { projectId: string; userId: string; planId: string; trialDays: number; checkoutKey: string }, now: Date): Promise<boolean> {
    const inserted = rowsOf(
      await this.db.execute(sql`
        INSERT INTO trials (project_id, user_id, plan_id, checkout_key, state, trial_days, created_at)
        VALUES (${t.projectId}, ${t.userId}, ${t.planId}, ${t.checkoutKey}, 'reserved', ${t.trialDays}, ${at(now)})
        ON CONFLICT (project_id, user_id) DO NOTHING
        RETURNING user_id`),
    );
    if (inserted.length > 0) return true;
    // A statement of its own, so it sees a reservation committed while the insert waited on it (the same checkout twice at once).
    const mine = rowsOf(
      await this.db.execute(sql`
        SELECT 1 FROM trials WHERE project_id = ${t.projectId} AND user_id = ${t.userId} AND checkout_key = ${t.checkoutKey} AND state = 'reserved'`),
    );
    return mine.length > 0;
  }

  /** The session made for a checkout holding a trial, so its expiry can give the trial back. */
  async attachTrialSession(projectId: string, userId: string, checkoutKey: string, sessionId: string): Promise<void> {
    await this.db.execute(sql`
      UPDATE trials SET session_id = ${sessionId} WHERE project_id = ${projectId} AND user_id = ${userId} AND checkout_key = ${checkoutKey} AND state = 'reserved'`);
  }

  /** Gives back a reservation Stripe refused to make a session for. */
  async releaseTrial(projectId: string, userId: string, checkoutKey: string): Promise<void> {
    await this.db.execute(sql`DELETE FROM trials WHERE project_id = ${projectId} AND user_id = ${userId} AND checkout_key = ${checkoutKey} AND state = 'reserved'`);
  }

  /** Whether the buyer of the pay link (by its token's digest) confirmed the project's policies (docs/front-desk.md). */
  async policiesConfirmed(projectId: string, payLinkIdHash: string): Promise<boolean> {
    const rows = rowsOf(await this.db.execute(sql`SELECT 1 FROM policy_confirmations WHERE project_id = ${projectId} AND pay_link_id = ${payLinkIdHash}`));
    return rows.length > 0;
  }

  /** Records what the buyer confirmed before paying, once per pay link (a second confirmation keeps the first). */
  async confirmPolicies(
    c: { projectId: string; userId: string; payLinkIdHash: string; policies: { terms: { value: string } | null; privacy: { value: string } | null; minimum_age: number | null } },
    now: Date,
  ): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO policy_confirmations (project_id, user_id, pay_link_id, terms_url, privacy_url, minimum_age, confirmed_at)
      VALUES (${c.projectId}, ${c.userId}, ${c.payLinkIdHash}, ${c.policies.terms?.value ?? null}, ${c.policies.privacy?.value ?? null},
              ${c.policies.minimum_age}::int, ${at(now)})
      ON CONFLICT (pay_link_id) DO NOTHING`);
  }
}
