import { parseOffsets } from '../lifecycle/reminder-rules.js';
import type { Platform } from '../targets/target.view.js';

/**
 * The value rules of a plan (docs/plans-targets.md). Patterns are shared with the route schemas
 * so the OpenAPI document states the same grammar the service enforces.
 */

/** A non-negative decimal with at most 2 fraction digits; 12 integer digits fit numeric(14,2). */
export const PRICE_PATTERN = '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,2})?$';

/**
 * `N unit[s]`: N a positive integer up to 9999 without leading zeros, one space, a lower-case unit.
 * The plural `s` is optional whatever N is ("1 months" is accepted as written).
 */
export const DURATION_PATTERN = '^[1-9][0-9]{0,3} (hour|day|week|month|year)s?$';

/** Three upper-case letters; `isCurrency` then checks the code is a real ISO 4217 one. */
export const CURRENCY_PATTERN = '^[A-Z]{3}$';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export const isCurrency = (code: string): boolean => CURRENCIES.has(code);

/**
 * The display price when the client sends none, e.g. "$10.00" or "€29.99". Formatted from the
 * decimal string itself (Intl formats strings exactly), in en-US conventions.
 */
export function formatPrice(price: string, currency: string): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(price as unknown as number);
}

/** The stored columns of a plan, as the service reasons about them. */
export interface PlanFields {
  name: string;
  price: string;
  currency: string;
  duration: string;
  priceFormatted: string;
  recurring: boolean;
  oneTime: boolean;
  /** A recurring plan's free trial in days (docs/payments.md, "Trials"); null: none. */
  trialDays: number | null;
  /** The plan's own reminder offsets (docs/lifecycle.md), normalised as the setting is; null: the project's. */
  reminderOffsets: string[] | null;
}

/** Stripe's bound on `subscription_data.trial_period_days`. */
export const MAX_TRIAL_DAYS = 730;

export interface PlanInput {
  plan_name?: string;
  plan_price?: string;
  plan_currency?: string;
  plan_duration?: string;
  plan_price_formatted?: string;
  plan_data?: { plan_recurring?: boolean; plan_one_time?: boolean };
  /** null clears it. */
  trial_days?: number | null;
  /** null: the project's `reminder_offsets` setting. */
  reminder_offsets?: string[] | null;
}

/**
 * Applies a partial update. A price or currency change without a new `plan_price_formatted`
 * re-formats it, so the display price never contradicts the price.
 */
export function mergePlan(current: PlanFields, patch: PlanInput): PlanFields {
  const price = patch.plan_price ?? current.price;
  const currency = patch.plan_currency ?? current.currency;
  const repriced = patch.plan_price !== undefined || patch.plan_currency !== undefined;
  return {
    name: patch.plan_name ?? current.name,
    price,
    currency,
    duration: patch.plan_duration ?? current.duration,
    priceFormatted: patch.plan_price_formatted ?? (repriced ? formatPrice(price, currency) : current.priceFormatted),
    recurring: patch.plan_data?.plan_recurring ?? current.recurring,
    oneTime: patch.plan_data?.plan_one_time ?? current.oneTime,
    trialDays: patch.trial_days === undefined ? current.trialDays : patch.trial_days,
    reminderOffsets: patch.reminder_offsets === undefined ? current.reminderOffsets : patch.reminder_offsets,
  };
}

/** The fields of a new plan; the original product's defaults (recurring false, one-time true). */
export function newPlan(input: Required<Pick<PlanInput, 'plan_name' | 'plan_price' | 'plan_currency' | 'plan_duration'>> & PlanInput): PlanFields {
  return {
    name: input.plan_name,
    price: input.plan_price,
    currency: input.plan_currency,
    duration: input.plan_duration,
    priceFormatted: input.plan_price_formatted ?? formatPrice(input.plan_price, input.plan_currency),
    recurring: input.plan_data?.plan_recurring ?? false,
    oneTime: input.plan_data?.plan_one_time ?? true,
    trialDays: input.trial_days ?? null,
    reminderOffsets: input.reminder_offsets ?? null,
  };
}

/**
 * What is wrong with the plan's trial and offsets once merged (the route schema checked their
 * shapes), or null; the offsets come back normalised as the setting stores them.
 */
export function extrasProblem(f: PlanFields): { ok: true; value: PlanFields } | { ok: false; message: string } {
  if (f.trialDays !== null) {
    if (!Number.isInteger(f.trialDays) || f.trialDays < 1 || f.trialDays > MAX_TRIAL_DAYS) {
      return { ok: false, message: `trial_days must be null or an integer from 1 to ${MAX_TRIAL_DAYS}` };
    }
    if (!f.recurring) {
      return { ok: false, message: 'trial_days needs a recurring plan (plan_data.plan_recurring true): a one-time purchase has no trial' };
    }
  }
  if (f.reminderOffsets === null) return { ok: true, value: f };
  const offsets = parseOffsets('reminder_offsets', f.reminderOffsets);
  if (!offsets.ok) return offsets;
  return { ok: true, value: { ...f, reminderOffsets: offsets.value } };
}

/** True when a patch names at least one field the update can change. */
export const changesSomething = (patch: PlanInput): boolean =>
  [patch.plan_name, patch.plan_price, patch.plan_currency, patch.plan_duration, patch.plan_price_formatted].some((v) => v !== undefined) ||
  patch.plan_data?.plan_recurring !== undefined ||
  patch.plan_data?.plan_one_time !== undefined ||
  patch.trial_days !== undefined ||
  patch.reminder_offsets !== undefined;

/**
 * A plan grants targets of one platform only (docs/access.md, "Whose id is it"): a member's
 * `user_id` is their id on the platform of their plan's targets, and a Discord id means nothing on
 * Telegram. Why adding a `adding` target to a plan that grants `granted` ones is refused, or null.
 */
export function mixedPlatformProblem(granted: Platform, adding: Platform): string | null {
  if (granted === adding) return null;
  return (
    `A plan grants targets of one platform only (a member's user_id is their id on that platform): ` +
    `this plan grants ${granted} targets, so a ${adding} target cannot be added; make a separate plan for ${adding}`
  );
}
