import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tz } from './columns.js';
import { merchantAccounts } from './payments.js';
import { projects } from './projects.js';

/**
 * Coupons (docs/coupons.md): a project's discount codes, the Stripe coupon each one is
 * on each merchant account it was used with, and the uses reserved by checkouts.
 */

/** A discount code of a project (`POST /coupons`). */
export const coupons = pgTable(
  'coupons',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** As the owner wrote it; unique in the project whatever its case (the index on upper(code)). */
    code: text('code').notNull(),
    /** `percentage` | `fixed`. */
    couponType: text('coupon_type').notNull(),
    /** Percent off (1-100) for `percentage`; for `fixed`, the amount off in `currency`'s smallest unit. */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** ISO 4217, upper-case: `fixed` only. */
    currency: text('currency'),
    /** `first_payment` | `every_payment` | `months` (Stripe coupon duration once | forever | repeating). */
    renewalConstraint: text('renewal_constraint').notNull(),
    /** For `months`: how many months the discount lasts (Stripe `duration_in_months`). */
    renewalMonths: integer('renewal_months'),
    autoApply: boolean('auto_apply').notNull().default(false),
    /** `any` | `new_members` | `existing_members`. */
    inviteeMode: text('invitee_mode').notNull(),
    /** `all` | `selected` (the plans in plan_ids). */
    planScope: text('plan_scope').notNull(),
    planIds: uuid('plan_ids').array().notNull().default(sql`'{}'::uuid[]`),
    /** Null: unlimited. */
    maxUses: integer('max_uses'),
    /** Uses reserved by checkouts and not released (docs/payments.md: a use is reserved at checkout). */
    uses: integer('uses').notNull().default(0),
    /** Null: never expires. */
    expiresAt: tz('expires_at'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('coupons_project_code_key').on(t.projectId, sql`upper(${t.code})`),
    index('coupons_project_created_idx').on(t.projectId, t.createdAt, t.id),
    index('coupons_project_auto_apply_idx').on(t.projectId).where(sql`auto_apply`),
  ],
);

/**
 * The Stripe coupon a coupon is on a merchant account: made at its first checkout there, then
 * reused. Keyed by the Stripe account too: a key replaced by one of another Stripe account needs
 * the coupon made again there.
 */
export const couponStripeCoupons = pgTable(
  'coupon_stripe_coupons',
  {
    couponId: uuid('coupon_id')
      .notNull()
      .references(() => coupons.id, { onDelete: 'cascade' }),
    merchantAccountId: uuid('merchant_account_id')
      .notNull()
      .references(() => merchantAccounts.id, { onDelete: 'cascade' }),
    providerAccountId: text('provider_account_id').notNull(),
    stripeCouponId: text('stripe_coupon_id').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.couponId, t.merchantAccountId, t.providerAccountId] })],
);

/** A use of a coupon by one checkout: reserved when the session is made, redeemed when it is paid, released when it expires unpaid. */
export const couponRedemptions = pgTable(
  'coupon_redemptions',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    couponId: uuid('coupon_id')
      .notNull()
      .references(() => coupons.id, { onDelete: 'cascade' }),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The checkout's idempotency key: a retried checkout finds its reservation instead of taking a second use. */
    checkoutKey: text('checkout_key').notNull(),
    userId: text('user_id').notNull(),
    planId: uuid('plan_id'),
    /** Stripe's Checkout Session (cs_…), once made. */
    checkoutSessionId: text('checkout_session_id'),
    /** `reserved` | `redeemed` | `released`. */
    status: text('status').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('coupon_redemptions_coupon_checkout_key').on(t.couponId, t.checkoutKey),
    index('coupon_redemptions_session_idx').on(t.checkoutSessionId).where(sql`checkout_session_id IS NOT NULL`),
  ],
);
