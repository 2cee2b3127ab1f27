import type { PlansStore } from '../../store/plans.store.js';
import { fail, ok, type Result } from '../errors.js';
import { changesSomething, extrasProblem, isCurrency, mergePlan, mixedPlatformProblem, newPlan, type PlanFields, type PlanInput } from './plan-rules.js';
import type { PlanTerms, PlanView } from './plan.view.js';

/** The statements of PlansStore this uses (a narrow port: tests give it a small twin). */
export type PlansStatements = Pick<PlansStore, 'addTarget' | 'create' | 'delete' | 'get' | 'list' | 'removeTarget' | 'terms' | 'update'>;

/** `plan_currency` may be left out: the project's `default_currency` setting is used (docs/plans-targets.md). */
export type NewPlanInput = PlanInput & Required<Pick<PlanInput, 'plan_name' | 'plan_price' | 'plan_duration'>>;

/** The project's `default_currency` setting (src/domain/settings), for a plan created without a currency. */
export type DefaultCurrency = (projectId: string) => Promise<string>;

const PLAN_NOT_FOUND = 'Plan not found';
const TARGET_NOT_FOUND = 'Target not found';

/**
 * The rules of plans. The route schemas check each value's shape; this checks what a pattern
 * cannot (a real ISO 4217 code, an update that changes something), then existence (404) last.
 */
export class PlansService {
  constructor(
    private readonly store: PlansStatements,
    private readonly defaultCurrency: DefaultCurrency = () => Promise.resolve('USD'),
  ) {}

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

  /** `id`: the plan keeps the id it had in the hosted product (docs/moving-in.md); a 409 when a plan holds it. */
  async create(projectId: string, input: NewPlanInput, id: string | null = null): Promise<Result<PlanView>> {
    const invalid = currencyProblem(input.plan_currency);
    if (invalid) return invalid;
    const extras = extrasProblem(newPlan({ ...input, plan_currency: input.plan_currency ?? 'USD' }));
    if (!extras.ok) return fail('VALIDATION_ERROR', extras.message);
    const plan_currency = input.plan_currency ?? (await this.defaultCurrency(projectId));
    const plan = await this.store.create(projectId, newPlan({ ...input, plan_currency, reminder_offsets: extras.value.reminderOffsets }), id);
    return plan ? ok(plan) : fail('CONFLICT', `Plan id ${id} is taken (by a plan of another project, or one deleted here)`);
  }

  async update(projectId: string, planId: string, patch: PlanInput): Promise<Result<PlanView>> {
    if (!changesSomething(patch)) {
      return fail(
        'VALIDATION_ERROR',
        'Provide at least one of plan_name, plan_price, plan_currency, plan_duration, plan_price_formatted, plan_data, trial_days, reminder_offsets',
      );
    }
    const invalid = currencyProblem(patch.plan_currency);
    if (invalid) return invalid;
    // The offsets' own shape is checked before anything is looked up; whether a trial fits the plan needs the plan.
    if (patch.reminder_offsets) {
      const offsets = extrasProblem({ ...EMPTY, reminderOffsets: patch.reminder_offsets });
      if (!offsets.ok) return fail('VALIDATION_ERROR', offsets.message);
    }
    let refused: string | null = null;
    const plan = await this.store.update(projectId, planId, (current) => {
      const merged = extrasProblem(mergePlan(current, patch));
      if (merged.ok) return merged.value;
      refused = merged.message;
      return null;
    });
    if (refused !== null) return fail('VALIDATION_ERROR', refused);
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

/** A plan with nothing that extrasProblem looks at, for checking offsets alone. */
const EMPTY: PlanFields = { name: '', price: '0', currency: 'USD', duration: '1 day', priceFormatted: '', recurring: false, oneTime: true, trialDays: null, reminderOffsets: null };

function currencyProblem(code: string | undefined): Result<never> | null {
  if (code === undefined || isCurrency(code)) return null;
  return fail('VALIDATION_ERROR', `plan_currency ${code} is not an ISO 4217 currency code`);
}
