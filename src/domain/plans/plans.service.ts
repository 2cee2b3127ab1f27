import type { PlansStore } from '../../store/plans.store.js';
import { fail, ok, type Result } from '../errors.js';
import { changesSomething, isCurrency, mergePlan, mixedPlatformProblem, newPlan, type PlanInput } from './plan-rules.js';
import type { PlanTerms, PlanView } from './plan.view.js';

/** The statements of PlansStore this uses (a narrow port: tests give it a small twin). */
export type PlansStatements = Pick<PlansStore, 'addTarget' | 'create' | 'delete' | 'get' | 'list' | 'removeTarget' | 'terms' | 'update'>;

export type NewPlanInput = PlanInput & Required<Pick<PlanInput, 'plan_name' | 'plan_price' | 'plan_currency' | 'plan_duration'>>;

const PLAN_NOT_FOUND = 'Plan not found';
const TARGET_NOT_FOUND = 'Target not found';

/**
 * The rules of plans. The route schemas check each value's shape; this checks what a pattern
 * cannot (a real ISO 4217 code, an update that changes something), then existence (404) last.
 */
export class PlansService {
  constructor(private readonly store: PlansStatements) {}

  list(projectId: string, page: { limit: number; offset: number }) {
    return this.store.list(projectId, page);
  }

  async get(projectId: string, planId: string): Promise<Result<PlanView>> {
    const plan = await this.store.get(projectId, planId);
    return plan ? ok(plan) : fail('NOT_FOUND', PLAN_NOT_FOUND);
  }

  /** The plan without its targets: what a checkout charges (PlanTerms). */
  async terms(projectId: string, planId: string): Promise<Result<PlanTerms>> {
    const plan = await this.store.terms(projectId, planId);
    return plan ? ok(plan) : fail('NOT_FOUND', PLAN_NOT_FOUND);
  }

  async create(projectId: string, input: NewPlanInput): Promise<Result<PlanView>> {
    const invalid = currencyProblem(input.plan_currency);
    if (invalid) return invalid;
    return ok(await this.store.create(projectId, newPlan(input)));
  }

  async update(projectId: string, planId: string, patch: PlanInput): Promise<Result<PlanView>> {
    if (!changesSomething(patch)) {
      return fail(
        'VALIDATION_ERROR',
        'Provide at least one of plan_name, plan_price, plan_currency, plan_duration, plan_price_formatted, plan_data',
      );
    }
    const invalid = currencyProblem(patch.plan_currency);
    if (invalid) return invalid;
    const plan = await this.store.update(projectId, planId, (current) => mergePlan(current, patch));
    return plan ? ok(plan) : fail('NOT_FOUND', PLAN_NOT_FOUND);
  }

  async delete(projectId: string, planId: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, planId)) ? ok(null) : fail('NOT_FOUND', PLAN_NOT_FOUND);
  }

  /**
   * Idempotent: granting a target the plan already grants answers the plan unchanged. A target of
   * the other platform than the plan's targets is refused (422, mixedPlatformProblem).
   */
  async addTarget(projectId: string, planId: string, targetId: string): Promise<Result<PlanView>> {
    const outcome = await this.store.addTarget(projectId, planId, targetId);
    if (outcome === 'plan_missing') return fail('NOT_FOUND', PLAN_NOT_FOUND);
    if (outcome === 'target_missing') return fail('NOT_FOUND', TARGET_NOT_FOUND);
    if ('mixed' in outcome) return fail('VALIDATION_ERROR', mixedPlatformProblem(outcome.mixed.granted, outcome.mixed.adding)!);
    return ok(outcome.plan);
  }

  async removeTarget(projectId: string, planId: string, targetId: string): Promise<Result<null>> {
    switch (await this.store.removeTarget(projectId, planId, targetId)) {
      case 'plan_missing':
        return fail('NOT_FOUND', PLAN_NOT_FOUND);
      case 'target_missing':
        return fail('NOT_FOUND', TARGET_NOT_FOUND);
      case 'not_linked':
        return fail('NOT_FOUND', `Target ${targetId} is not granted by this plan`);
      case 'removed':
        return ok(null);
    }
  }
}

function currencyProblem(code: string | undefined): Result<never> | null {
  if (code === undefined || isCurrency(code)) return null;
  return fail('VALIDATION_ERROR', `plan_currency ${code} is not an ISO 4217 currency code`);
}
