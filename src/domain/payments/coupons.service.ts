import type { CouponChanges, CouponsStore } from '../../store/coupons.store.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { parseFutureInstant } from '../instant.js';
import { termsOf, type CouponTermsInput, type InviteeMode, type PlanScope } from './coupon-rules.js';
import type { CouponView } from './coupon.view.js';

/**
 * A project's coupons (docs/coupons.md). The route schemas check each value's shape;
 * this checks what holds between fields (a percentage's range, a fixed coupon's currency, the plans
 * of a `selected` scope), then the code's uniqueness (409) and existence (404) last.
 */

export interface CouponInput extends CouponTermsInput {
  code: string;
  auto_apply?: boolean;
  invitee_mode?: InviteeMode;
  plan_scope?: PlanScope;
  plan_ids?: string[];
  max_uses?: number | null;
  expires_at?: unknown;
}

/** The terms fixed at creation: Stripe coupons cannot change them either. */
const TERMS = ['coupon_type', 'amount', 'currency', 'renewal_constraint', 'renewal_months'] as const;
const CHANGEABLE = ['code', 'auto_apply', 'invitee_mode', 'plan_scope', 'plan_ids', 'max_uses', 'expires_at'] as const;

export type CouponPatch = Partial<Pick<CouponInput, (typeof CHANGEABLE)[number]>> & Partial<Record<(typeof TERMS)[number], unknown>>;

/** The coupon statements the API's coupon routes run. */
export type CouponStatements = Pick<CouponsStore, 'create' | 'list' | 'get' | 'update' | 'delete' | 'missingPlans'>;

const COUPON_NOT_FOUND = 'Coupon not found';
const duplicate = (code: string) => fail<never>('CONFLICT', `A coupon with code ${code} already exists in this project (codes are matched whatever their case)`);

export class CouponsService {
  constructor(
    private readonly store: CouponStatements,
    private readonly clock: Clock,
  ) {}

  async create(projectId: string, input: CouponInput): Promise<Result<CouponView>> {
    const terms = termsOf(input);
    if ('problem' in terms) return fail('VALIDATION_ERROR', terms.problem);
    const planScope = input.plan_scope ?? 'all';
    const planIds = await this.scopeProblem(projectId, planScope, input.plan_ids);
    if (!planIds.ok) return planIds;
    const expiresAt = this.expiry(input.expires_at);
    if (expiresAt instanceof AppError) return { ok: false, error: expiresAt };
    const created = await this.store.create(
      projectId,
      {
        ...terms,
        code: input.code,
        autoApply: input.auto_apply ?? false,
        inviteeMode: input.invitee_mode ?? 'any',
        planScope,
        planIds: planIds.value,
        maxUses: input.max_uses ?? null,
        expiresAt,
      },
      this.clock.now(),
    );
    return created === 'duplicate' ? duplicate(input.code) : ok(created);
  }

  list(projectId: string, page: { limit: number; offset: number }) {
    return this.store.list(projectId, page);
  }

  async get(projectId: string, id: string): Promise<Result<CouponView>> {
    const coupon = await this.store.get(projectId, id);
    return coupon ? ok(coupon) : fail('NOT_FOUND', COUPON_NOT_FOUND);
  }

  /**
   * Changes the code, limits or scope. The discount terms are refused: the Stripe coupon made from
   * them cannot change, and a checkout already made keeps them; create a new coupon instead.
   */
  async update(projectId: string, id: string, patch: CouponPatch): Promise<Result<CouponView>> {
    const fixed = TERMS.filter((f) => patch[f] !== undefined);
    if (fixed.length > 0) {
      return fail('VALIDATION_ERROR', `${fixed.join(', ')} cannot be changed: a coupon's discount is fixed once made, as Stripe's coupons are; create a new coupon (and delete this one)`);
    }
    if (!CHANGEABLE.some((f) => patch[f] !== undefined)) return fail('VALIDATION_ERROR', `Provide at least one of ${CHANGEABLE.join(', ')}`);
    const changes: CouponChanges = {};
    if (patch.code !== undefined) changes.code = patch.code;
    if (patch.auto_apply !== undefined) changes.autoApply = patch.auto_apply;
    if (patch.invitee_mode !== undefined) changes.inviteeMode = patch.invitee_mode;
    if (patch.max_uses !== undefined) changes.maxUses = patch.max_uses;
    if (patch.expires_at !== undefined) {
      const expiresAt = this.expiry(patch.expires_at);
      if (expiresAt instanceof AppError) return { ok: false, error: expiresAt };
      changes.expiresAt = expiresAt;
    }
    if (patch.plan_scope !== undefined || patch.plan_ids !== undefined) {
      // The scope and its plans change together: a list alone means `selected`, `all` alone clears the list.
      const scope = patch.plan_scope ?? (patch.plan_ids !== undefined ? 'selected' : 'all');
      const planIds = await this.scopeProblem(projectId, scope, patch.plan_ids);
      if (!planIds.ok) return planIds;
      changes.planScope = scope;
      changes.planIds = planIds.value;
    }
    const updated = await this.store.update(projectId, id, changes, this.clock.now());
    if (updated === 'duplicate') return duplicate(patch.code!);
    return updated ? ok(updated) : fail('NOT_FOUND', COUPON_NOT_FOUND);
  }

  async delete(projectId: string, id: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, id)) ? ok(null) : fail('NOT_FOUND', COUPON_NOT_FOUND);
  }

  /** The plan ids to store for `scope`, or why they cannot be (a 422). */
  private async scopeProblem(projectId: string, scope: PlanScope, planIds: string[] | undefined): Promise<Result<string[]>> {
    if (scope === 'all') {
      if (planIds !== undefined && planIds.length > 0) return fail('VALIDATION_ERROR', 'plan_ids is for plan_scope "selected" only: with "all" the coupon applies to every plan');
      return ok([]);
    }
    if (planIds === undefined || planIds.length === 0) return fail('VALIDATION_ERROR', 'plan_ids must list at least one plan with plan_scope "selected"');
    const unique = [...new Set(planIds.map((id) => id.toLowerCase()))];
    const missing = await this.store.missingPlans(projectId, unique);
    if (missing.length > 0) return fail('VALIDATION_ERROR', `plan_ids: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} no plan of this project`);
    return ok(unique);
  }

  /** A future expiry, null for none (an explicit null in a PATCH removes it), or the instant's 422. */
  private expiry(value: unknown): Date | null | AppError {
    if (value === undefined || value === null) return null;
    return parseFutureInstant(value, this.clock.now(), 'expires_at');
  }
}
