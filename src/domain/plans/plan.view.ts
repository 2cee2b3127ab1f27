import type { TargetView } from '../targets/target.view.js';

/** A plan as the API and events show it (docs/plans-targets.md, "The plan object"). */
export interface PlanView {
  plan_id: string;
  plan_name: string;
  /** Decimal string with two fraction digits, e.g. "29.99". */
  plan_price: string;
  /** ISO 4217 code, e.g. "USD". */
  plan_currency: string;
  /** `N hour|day|week|month|year[s]` (src/domain/plans/plan-rules.ts). */
  plan_duration: string;
  plan_price_formatted: string;
  plan_data: { plan_recurring: boolean; plan_one_time: boolean };
  /** tenure's: a recurring plan's free trial in days (docs/payments.md, "Trials"); present only when set. */
  trial_days?: number;
  /** tenure's: the plan's own reminder offsets (docs/lifecycle.md); present only when set (else the project's). */
  reminder_offsets?: string[];
  /** The targets the plan grants, in the order they were added. */
  plan_targets: TargetView[];
}

/**
 * A plan without its targets: what a checkout or a pay link charges. Read without the targets'
 * counts, which cost a count of the members of every target the plan grants.
 */
export type PlanTerms = Omit<PlanView, 'plan_targets'>;
