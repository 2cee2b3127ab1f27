import type { TSchema } from 'typebox';
import type { ErrorObject } from 'ajv';
import type { PlanInput } from '../../domain/plans/plan-rules.js';
import type { PlanView } from '../../domain/plans/plan.view.js';
import { validationMessage, validatorCompiler } from '../validation.js';

/**
 * The dashboard's forms for plans, targets and coupons (docs/dashboard-settings.md) turned into the
 * bodies the v2 API takes, and checked against the API's own body schemas (the same grammar and
 * the same messages as a 422 there), before the service applies its own rules.
 */

export type Form = Record<string, string | string[] | undefined>;

/** One text field of a form, trimmed ('' when absent; the first value when repeated). */
export function field(body: unknown, name: string): string {
  const raw = (body as Form | undefined)?.[name];
  return String((Array.isArray(raw) ? raw[0] : raw) ?? '').trim();
}

type Check = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
const compiled = new WeakMap<object, Check>();

/** The first problem the API's body schema finds in `body` (its 422 message), or null. */
export function schemaProblem(schema: TSchema, body: unknown): string | null {
  let check = compiled.get(schema);
  if (!check) {
    check = (validatorCompiler as unknown as (o: { schema: unknown; httpPart: string }) => Check)({ schema, httpPart: 'body' });
    compiled.set(schema, check);
  }
  if (check(body)) return null;
  // A union's branches fail first and the union last: the outermost error with its own wording reads best.
  const errors = check.errors ?? [];
  const worded = [...errors].reverse().find((e) => (e.parentSchema as { 'x-message'?: string } | undefined)?.['x-message']);
  const error = worded ?? errors[0];
  return error ? validationMessage(error, 'body') : 'The form is not valid';
}

/** What the plan form shows: the values as typed (re-shown after a refusal). */
export interface PlanForm {
  name: string;
  price: string;
  currency: string;
  count: string;
  unit: string;
  billing: 'recurring' | 'once';
  trialDays: string;
  offsets: string;
}

export const EMPTY_PLAN_FORM: PlanForm = { name: '', price: '', currency: '', count: '1', unit: 'month', billing: 'recurring', trialDays: '', offsets: '' };
export const UNITS = ['hour', 'day', 'week', 'month', 'year'] as const;

export function planFormOf(body: unknown): PlanForm {
  return {
    name: field(body, 'name'),
    price: field(body, 'price'),
    currency: field(body, 'currency').toUpperCase(),
    count: field(body, 'duration_count'),
    unit: field(body, 'duration_unit'),
    billing: field(body, 'billing') === 'once' ? 'once' : 'recurring',
    trialDays: field(body, 'trial_days'),
    offsets: field(body, 'reminder_offsets'),
  };
}

export function planFormFrom(plan: PlanView): PlanForm {
  const [count = '1', unit = 'month'] = plan.plan_duration.split(' ');
  return {
    name: plan.plan_name,
    price: plan.plan_price,
    currency: plan.plan_currency,
    count,
    unit: unit.replace(/s$/, ''),
    billing: plan.plan_data.plan_recurring ? 'recurring' : 'once',
    trialDays: plan.trial_days === undefined ? '' : String(plan.trial_days),
    offsets: plan.reminder_offsets === undefined ? '' : plan.reminder_offsets.length === 0 ? 'none' : plan.reminder_offsets.join(', '),
  };
}

/** A whole number as a number; anything else as typed, for the schema to refuse with its message. */
const integerOr = (text: string): number | string => (/^[0-9]{1,6}$/.test(text) ? Number(text) : text);

/** The create body of a plan form (`plan_currency` left out when blank: the project's default). */
export function planBody(form: PlanForm): PlanInput & Record<string, unknown> {
  const count = integerOr(form.count);
  return {
    plan_name: form.name,
    plan_price: form.price,
    ...(form.currency ? { plan_currency: form.currency } : {}),
    plan_duration: `${count} ${form.unit}${count === 1 ? '' : 's'}`,
    plan_data: { plan_recurring: form.billing === 'recurring', plan_one_time: form.billing === 'once' },
    trial_days: form.trialDays === '' ? null : (integerOr(form.trialDays) as number),
    // Blank: the project's setting (null); "none": no reminders ([]).
    reminder_offsets: form.offsets === '' ? null : /^none$/i.test(form.offsets) ? [] : form.offsets.split(/[\s,]+/).filter(Boolean),
  };
}

/** The PATCH body: only what differs from the plan (an unchanged price keeps a custom display price). */
export function planPatch(current: PlanView, form: PlanForm): Record<string, unknown> {
  const next = planBody(form);
  const was = planBody(planFormFrom(current));
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) {
    if (JSON.stringify(value) !== JSON.stringify(was[key])) patch[key] = value;
  }
  return patch;
}
