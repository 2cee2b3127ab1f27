import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { plans } from './catalogue.js';
import { tz } from './columns.js';
import { projects } from './projects.js';

/**
 * Payments (docs/payments.md): a project's merchant accounts (Stripe), the provider's events as
 * applied (each once), and the payments they recorded.
 */

/** A project's account with a payment provider (`POST /merchant-accounts`). */
export const merchantAccounts = pgTable(
  'merchant_accounts',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** `stripe` (paypal and nowpayments are refused until built). */
    provider: text('provider').notNull(),
    /** `sandbox` (Stripe test mode) | `production` (live mode). */
    environment: text('environment').notNull(),
    /** The secret (or restricted) key, sealed with the instance's encryption key; never returned. */
    secretKeySealed: text('secret_key_sealed').notNull(),
    /** The signing secret of the provider's webhook endpoint (Stripe `whsec_…`), sealed; null until given. */
    webhookSecretSealed: text('webhook_secret_sealed'),
    /** The provider's id of the account (Stripe `acct_…`), as the key check returned it. */
    providerAccountId: text('provider_account_id').notNull(),
    providerAccountName: text('provider_account_name'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    /** Reconciliation: the provider's events up to this instant have been listed and applied. */
    reconciledThrough: tz('reconciled_through'),
    reconciledAt: tz('reconciled_at'),
  },
  (t) => [
    uniqueIndex('merchant_accounts_project_provider_env_key').on(t.projectId, t.provider, t.environment),
    index('merchant_accounts_project_created_idx').on(t.projectId, t.createdAt, t.id),
  ],
);

/** The provider's events applied for an account: an event id is applied once, whichever way it came. */
export const paymentEvents = pgTable(
  'payment_events',
  {
    merchantAccountId: uuid('merchant_account_id')
      .notNull()
      .references(() => merchantAccounts.id, { onDelete: 'cascade' }),
    /** The provider's event id (Stripe `evt_…`). */
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    /** When the provider created the event. */
    createdAt: tz('created_at').notNull(),
    receivedAt: tz('received_at').notNull().defaultNow(),
    /** `webhook` | `reconcile` | `return` (a pay link's done page read the session): how it reached tenure first. */
    source: text('source').notNull(),
    /** What applying it did (`applied`, `ignored: …`), for the operator reading the table. */
    outcome: text('outcome').notNull(),
  },
  (t) => [primaryKey({ columns: [t.merchantAccountId, t.eventId] }), index('payment_events_received_idx').on(t.receivedAt)],
);

/** A payment as the provider reported it: one row per payment intent or invoice. */
export const payments = pgTable(
  'payments',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    merchantAccountId: uuid('merchant_account_id').references(() => merchantAccounts.id, { onDelete: 'set null' }),
    provider: text('provider').notNull(),
    /** What makes the payment one: the invoice id of a subscription's payment, else the payment intent id. */
    paymentKey: text('payment_key').notNull(),
    userId: text('user_id').notNull(),
    planId: uuid('plan_id').references(() => plans.id, { onDelete: 'set null' }),
    /** In the currency's smallest unit, as the provider counts it. */
    amountMinor: bigint('amount_minor', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    /** `succeeded` | `refunded` | `disputed` | `failed`. */
    status: text('status').notNull(),
    checkoutSessionId: text('checkout_session_id'),
    paymentIntentId: text('payment_intent_id'),
    invoiceId: text('invoice_id'),
    subscriptionId: text('subscription_id'),
    customerId: text('customer_id'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('payments_project_provider_key').on(t.projectId, t.provider, t.paymentKey),
    index('payments_project_created_idx').on(t.projectId, t.createdAt, t.id),
    // A member's own payments, newest first: the portal reads them on every open.
    index('payments_member_created_idx').on(t.projectId, t.userId, t.createdAt, t.id),
    index('payments_payment_intent_idx').on(t.paymentIntentId).where(sql`payment_intent_id IS NOT NULL`),
  ],
);

/**
 * A full refund or a dispute that reached tenure before the payment it reverses (Stripe does not
 * promise order): held here, in the transaction that records its event, until that payment is
 * recorded, which then is recorded reversed and grants nothing (docs/payments.md, "Out of order").
 * Keyed as reversals find payments, by payment intent; a held row is removed when it is applied.
 */
export const heldReversals = pgTable(
  'held_reversals',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    merchantAccountId: uuid('merchant_account_id')
      .notNull()
      .references(() => merchantAccounts.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    /** The payment intent the refund or dispute names (Stripe `pi_…`). */
    paymentIntentId: text('payment_intent_id').notNull(),
    /** `refunded` | `disputed`: what the payment becomes when it arrives. The first reversal held wins. */
    status: text('status').notNull(),
    /** The provider's id of the reversal's event, and when the provider created it. */
    eventId: text('event_id').notNull(),
    eventCreatedAt: tz('event_created_at').notNull(),
    receivedAt: tz('received_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.provider, t.paymentIntentId] })],
);

/**
 * One trial per user per project (docs/payments.md, "Trials"): `reserved` by the checkout that
 * offered it (its Stripe idempotency key, then its session), `started` when the session completed.
 * A reservation whose session expired unpaid is deleted, so the member may try again; a started
 * one stays for good.
 */
export const trials = pgTable(
  'trials',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    planId: uuid('plan_id').references(() => plans.id, { onDelete: 'set null' }),
    /** The checkout's Stripe idempotency key: a retried checkout finds its own reservation. */
    checkoutKey: text('checkout_key').notNull(),
    sessionId: text('session_id'),
    /** `reserved` | `started`. */
    state: text('state').notNull(),
    trialDays: integer('trial_days').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    startedAt: tz('started_at'),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index('trials_session_idx').on(t.sessionId)],
);

/**
 * A buyer's confirmation of the project's policies before paying (setting `policies`, docs/front-desk.md):
 * what they were shown and confirmed, through which pay link, when.
 */
export const policyConfirmations = pgTable(
  'policy_confirmations',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    payLinkId: text('pay_link_id').notNull(),
    termsUrl: text('terms_url'),
    privacyUrl: text('privacy_url'),
    minimumAge: integer('minimum_age'),
    confirmedAt: tz('confirmed_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('policy_confirmations_link_key').on(t.payLinkId), index('policy_confirmations_user_idx').on(t.projectId, t.userId)],
);
