import { sql, type SQL } from 'drizzle-orm';
import type { CouponCandidate, CouponTerms, InviteeMode, PlanScope } from '../domain/payments/coupon-rules.js';
import type { CouponView } from '../domain/payments/coupon.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { at, iso } from '../database/sql.js';

/**
 * Coupons (docs/coupons.md): the codes, the Stripe coupon each is on a merchant
 * account, and the uses checkouts reserve. A use is taken by a conditional UPDATE (`uses <
 * max_uses`), so two checkouts racing for the last use cannot both get it, on either storage.
 */

/** The coupon object of a relation `alias` with the coupons columns, as the API shows it. */
const couponJson = (alias: string) => {
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  return sql<CouponView>`jsonb_build_object(
    'coupon_id', ${c('id')}, 'code', ${c('code')}, 'coupon_type', ${c('coupon_type')}, 'amount', ${c('amount')},
    'currency', ${c('currency')}, 'renewal_constraint', ${c('renewal_constraint')}, 'renewal_months', ${c('renewal_months')},
    'auto_apply', ${c('auto_apply')}, 'invitee_mode', ${c('invitee_mode')}, 'plan_scope', ${c('plan_scope')},
    'plan_ids', to_jsonb(${c('plan_ids')}), 'max_uses', ${c('max_uses')}, 'uses', ${c('uses')},
    'expires_at', CASE WHEN ${c('expires_at')} IS NULL THEN NULL ELSE ${iso(c('expires_at'))} END,
    'created_at', ${iso(c('created_at'))}, 'updated_at', ${iso(c('updated_at'))})`;
};

/** A coupon's columns as a checkout weighs it (CouponCandidate), plus its creation for ranking. */
const CANDIDATE = sql.raw(`id, code, coupon_type AS "couponType", amount::int AS amount, currency, renewal_constraint AS "renewalConstraint",
  renewal_months AS "renewalMonths", invitee_mode AS "inviteeMode", plan_scope AS "planScope", to_jsonb(plan_ids) AS "planIds",
  max_uses AS "maxUses", uses, expires_at AS "expiresAt", to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"`);

type CandidateRow = Omit<CouponCandidate, 'expiresAt'> & { expiresAt: string | Date | null; createdAt: string };
const candidateOf = (r: CandidateRow): CouponCandidate & { createdAt: string } => ({ ...r, expiresAt: r.expiresAt === null ? null : new Date(r.expiresAt) });

/** The fields a coupon is stored with. */
export interface CouponFields extends CouponTerms {
  code: string;
  autoApply: boolean;
  inviteeMode: InviteeMode;
  planScope: PlanScope;
  planIds: string[];
  maxUses: number | null;
  expiresAt: Date | null;
}

/** What PATCH may change: the limits, scope and code; never the terms, which the Stripe coupon fixed. */
export type CouponChanges = Partial<Pick<CouponFields, 'code' | 'autoApply' | 'inviteeMode' | 'planScope' | 'planIds' | 'maxUses' | 'expiresAt'>>;

/** Postgres's unique_violation: a code already taken in the project (the index on upper(code)). */
const isDuplicate = (err: unknown) => {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.code === '23505' || e.cause?.code === '23505';
};

export class CouponsStore {
  constructor(private readonly db: Db) {}

  /** The new coupon, or `duplicate` when the project has that code (any case). */
  async create(projectId: string, f: CouponFields, now: Date): Promise<CouponView | 'duplicate'> {
    const nowAt = at(now);
    try {
      const result = await this.db.execute(sql`
        INSERT INTO coupons AS c (project_id, code, coupon_type, amount, currency, renewal_constraint, renewal_months, auto_apply,
          invitee_mode, plan_scope, plan_ids, max_uses, expires_at, created_at, updated_at)
        VALUES (${projectId}, ${f.code}, ${f.couponType}, ${f.amount}, ${f.currency}, ${f.renewalConstraint}, ${f.renewalMonths}, ${f.autoApply},
          ${f.inviteeMode}, ${f.planScope}, ${uuidArray(f.planIds)}, ${f.maxUses}, ${f.expiresAt?.toISOString() ?? null}::timestamptz, ${nowAt}, ${nowAt})
        RETURNING ${couponJson('c')} AS coupon`);
      return rowsOf<{ coupon: CouponView }>(result)[0]!.coupon;
    } catch (err) {
      if (isDuplicate(err)) return 'duplicate';
      throw err;
    }
  }

  /** Newest first, ties broken by id, as every list (docs/idempotency-and-lists.md, "Lists"). */
  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: CouponView[]; total: number }> {
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        SELECT ${couponJson('c')} AS coupon FROM coupons c WHERE c.project_id = ${projectId}
        ORDER BY c.created_at DESC, c.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM coupons WHERE project_id = ${projectId}`),
    ]);
    return { items: rowsOf<{ coupon: CouponView }>(items).map((r) => r.coupon), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 };
  }

  async get(projectId: string, id: string): Promise<CouponView | null> {
    const result = await this.db.execute(sql`SELECT ${couponJson('c')} AS coupon FROM coupons c WHERE c.project_id = ${projectId} AND c.id = ${id}`);
    return rowsOf<{ coupon: CouponView }>(result)[0]?.coupon ?? null;
  }

  /** The changed coupon; null when there is none; `duplicate` when the new code is taken. */
  async update(projectId: string, id: string, ch: CouponChanges, now: Date): Promise<CouponView | null | 'duplicate'> {
    const sets: SQL[] = [sql`updated_at = ${at(now)}`];
    if (ch.code !== undefined) sets.push(sql`code = ${ch.code}`);
    if (ch.autoApply !== undefined) sets.push(sql`auto_apply = ${ch.autoApply}`);
    if (ch.inviteeMode !== undefined) sets.push(sql`invitee_mode = ${ch.inviteeMode}`);
    if (ch.planScope !== undefined) sets.push(sql`plan_scope = ${ch.planScope}`);
    if (ch.planIds !== undefined) sets.push(sql`plan_ids = ${uuidArray(ch.planIds)}`);
    if (ch.maxUses !== undefined) sets.push(sql`max_uses = ${ch.maxUses}`);
    if (ch.expiresAt !== undefined) sets.push(sql`expires_at = ${ch.expiresAt?.toISOString() ?? null}::timestamptz`);
    try {
      const result = await this.db.execute(sql`
        UPDATE coupons c SET ${sql.join(sets, sql`, `)} WHERE c.project_id = ${projectId} AND c.id = ${id} RETURNING ${couponJson('c')} AS coupon`);
      return rowsOf<{ coupon: CouponView }>(result)[0]?.coupon ?? null;
    } catch (err) {
      if (isDuplicate(err)) return 'duplicate';
      throw err;
    }
  }

  /** Deletes the coupon, its uses and its Stripe coupon ids; sessions already made with it keep their discount. */
  async delete(projectId: string, id: string): Promise<boolean> {
    const result = await this.db.execute(sql`DELETE FROM coupons WHERE project_id = ${projectId} AND id = ${id} RETURNING id`);
    return rowsOf(result).length > 0;
  }

  /** The coupon with this code in the project, whatever its case. */
  async byCode(projectId: string, code: string): Promise<CouponCandidate | null> {
    const result = await this.db.execute(sql`SELECT ${CANDIDATE} FROM coupons WHERE project_id = ${projectId} AND upper(code) = upper(${code})`);
    const row = rowsOf<CandidateRow>(result)[0];
    return row ? candidateOf(row) : null;
  }

  /** The project's auto-applied coupons. */
  async autoApplied(projectId: string): Promise<(CouponCandidate & { createdAt: string })[]> {
    const result = await this.db.execute(sql`SELECT ${CANDIDATE} FROM coupons WHERE project_id = ${projectId} AND auto_apply`);
    return rowsOf<CandidateRow>(result).map(candidateOf);
  }

  /** The ids among `planIds` that are no (live) plan of the project. */
  async missingPlans(projectId: string, planIds: readonly string[]): Promise<string[]> {
    if (planIds.length === 0) return [];
    const result = await this.db.execute(sql`
      SELECT id FROM unnest(${uuidArray(planIds)}) AS wanted(id)
      WHERE NOT EXISTS (SELECT 1 FROM plans p WHERE p.project_id = ${projectId} AND p.id = wanted.id AND p.deleted_at IS NULL)`);
    return rowsOf<{ id: string }>(result).map((r) => r.id);
  }

  /** Whether the user has, or has had, a membership in the project (invitee_mode). */
  async hasMembership(projectId: string, userId: string): Promise<boolean> {
    const result = await this.db.execute(sql`SELECT 1 FROM memberships WHERE project_id = ${projectId} AND user_id = ${userId} LIMIT 1`);
    return rowsOf(result).length > 0;
  }

  /** The Stripe coupon made for the coupon on this merchant account (and Stripe account), if any. */
  async stripeCouponOf(couponId: string, merchantAccountId: string, providerAccountId: string): Promise<string | null> {
    const result = await this.db.execute(sql`
      SELECT stripe_coupon_id AS id FROM coupon_stripe_coupons
      WHERE coupon_id = ${couponId} AND merchant_account_id = ${merchantAccountId} AND provider_account_id = ${providerAccountId}`);
    return rowsOf<{ id: string }>(result)[0]?.id ?? null;
  }

  async rememberStripeCoupon(couponId: string, merchantAccountId: string, providerAccountId: string, stripeCouponId: string): Promise<void> {
    await this.db.execute(sql`
      INSERT INTO coupon_stripe_coupons (coupon_id, merchant_account_id, provider_account_id, stripe_coupon_id)
      VALUES (${couponId}, ${merchantAccountId}, ${providerAccountId}, ${stripeCouponId})
      ON CONFLICT (coupon_id, merchant_account_id, provider_account_id) DO NOTHING`);
  }

  /**
   * The checkout's redemption row, reserved: false when the coupon is not the project's or the
   * checkout holds a use already (a released one is reserved again). Its unique key makes a
   * concurrent retry of the same checkout wait for this one's transaction and then find the row.
   */
  async claimRedemption(r: { projectId: string; couponId: string; checkoutKey: string; userId: string; planId: string }, now: Date): Promise<boolean> {
    const nowAt = at(now);
    const claimed = await this.db.execute(sql`
      INSERT INTO coupon_redemptions AS r (coupon_id, project_id, checkout_key, user_id, plan_id, status, created_at, updated_at)
      SELECT id, project_id, ${r.checkoutKey}, ${r.userId}, ${r.planId}, 'reserved', ${nowAt}, ${nowAt} FROM coupons WHERE id = ${r.couponId} AND project_id = ${r.projectId}
      ON CONFLICT (coupon_id, checkout_key) DO UPDATE SET status = 'reserved', updated_at = excluded.updated_at WHERE r.status = 'released'
      RETURNING r.id`);
    return rowsOf(claimed).length > 0;
  }

  /** Whether the checkout has a redemption row of the coupon, in any status. */
  async hasRedemption(couponId: string, checkoutKey: string): Promise<boolean> {
    const held = await this.db.execute(sql`SELECT 1 FROM coupon_redemptions WHERE coupon_id = ${couponId} AND checkout_key = ${checkoutKey}`);
    return rowsOf(held).length > 0;
  }

  /**
   * Takes one use if one is left and the coupon is unexpired at `now`; whether it did. A conditional
   * UPDATE: two checkouts racing for the last use cannot both get it, on either storage.
   */
  async takeUse(couponId: string, now: Date): Promise<boolean> {
    const taken = await this.db.execute(sql`
      UPDATE coupons SET uses = uses + 1
      WHERE id = ${couponId} AND (max_uses IS NULL OR uses < max_uses) AND (expires_at IS NULL OR expires_at > ${at(now)})
      RETURNING id`);
    return rowsOf(taken).length > 0;
  }

  /**
   * The checkout's session is made: its reservation is found by the session's id from now on.
   * True when the reservation had that session already (a retry answered with the first session).
   */
  async attachSession(couponId: string, checkoutKey: string, sessionId: string): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH before AS (
        SELECT id, checkout_session_id FROM coupon_redemptions WHERE coupon_id = ${couponId} AND checkout_key = ${checkoutKey} FOR UPDATE
      )
      UPDATE coupon_redemptions r SET checkout_session_id = ${sessionId} FROM before WHERE r.id = before.id
      RETURNING before.checkout_session_id IS NOT DISTINCT FROM ${sessionId}::text AS same`);
    return rowsOf<{ same: boolean }>(result)[0]?.same ?? false;
  }

  /** Gives the checkout's reserved use back (Stripe refused the session). */
  async release(couponId: string, checkoutKey: string, now: Date): Promise<void> {
    await this.db.execute(releaseUse(sql`coupon_id = ${couponId} AND checkout_key = ${checkoutKey}`, now));
  }

  /** For the payment of a session: its reserved use becomes a redemption; returns the coupon codes. */
  async redeemSessionUse(projectId: string, sessionId: string, now: Date): Promise<string[]> {
    const result = await this.db.execute(sql`
      UPDATE coupon_redemptions r SET status = 'redeemed', updated_at = ${at(now)}
      FROM coupons c WHERE c.id = r.coupon_id AND r.project_id = ${projectId} AND r.checkout_session_id = ${sessionId} AND r.status = 'reserved'
      RETURNING c.code`);
    return rowsOf<{ code: string }>(result).map((r) => r.code);
  }

  /** For a session that expired unpaid: its reserved use goes back to the coupon; returns the coupon codes. */
  async releaseSessionUse(projectId: string, sessionId: string, now: Date): Promise<string[]> {
    const result = await this.db.execute(releaseUse(sql`project_id = ${projectId} AND checkout_session_id = ${sessionId}`, now));
    return rowsOf<{ code: string }>(result).map((r) => r.code);
  }
}

/** `ids` as a uuid[] parameter (both drivers take the array literal). */
const uuidArray = (ids: readonly string[]) => sql`${`{${ids.join(',')}}`}::uuid[]`;

/** Releases the reserved use(s) matching `where` and gives them back to their coupon; returns the coupon codes. */
function releaseUse(where: SQL, now: Date): SQL {
  return sql`
    WITH released AS (
      UPDATE coupon_redemptions SET status = 'released', updated_at = ${at(now)}
      WHERE ${where} AND status = 'reserved' RETURNING coupon_id
    )
    UPDATE coupons c SET uses = c.uses - 1 FROM released WHERE c.id = released.coupon_id RETURNING c.code`;
}
