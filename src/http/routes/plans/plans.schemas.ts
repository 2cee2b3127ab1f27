import Type from 'typebox';
import { CURRENCY_PATTERN, DURATION_PATTERN, MAX_TRIAL_DAYS, PRICE_PATTERN } from '../../../domain/plans/plan-rules.js';
import { Envelope, errorResponses, Page, ProjectParams, Uuid } from '../../schemas.js';
import { Target } from '../targets/targets.schemas.js';

export const Plan = Type.Object({
  plan_id: Type.String({ format: 'uuid' }),
  plan_name: Type.String(),
  plan_price: Type.String({ description: 'Decimal string with two fraction digits', examples: ['29.99'] }),
  plan_currency: Type.String({ description: 'ISO 4217 code', examples: ['USD'] }),
  plan_duration: Type.String({ description: '`N hour|day|week|month|year[s]`', examples: ['1 month'] }),
  plan_price_formatted: Type.String({ examples: ['$29.99'] }),
  plan_data: Type.Object({ plan_recurring: Type.Boolean(), plan_one_time: Type.Boolean() }),
  trial_days: Type.Optional(Type.Integer({ description: "tenure's: a recurring plan's free trial in days; present only when set", examples: [7] })),
  reminder_offsets: Type.Optional(
    Type.Array(Type.String(), { description: "tenure's: the plan's own reminder offsets, furthest first; present only when set (else the project's setting)", examples: [['7d', '1d']] }),
  ),
  plan_targets: Type.Array(Target, { description: 'The targets the plan grants, in the order they were added' }),
});

const OFFSETS_MESSAGE = 'reminder_offsets must be null or a list of at most 10 durations before the end, in days or hours from 1h to 90d (["3d", "1d", "12h"]), or [] for none';

const fields = {
  plan_name: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: '\\S',
    'x-message': 'plan_name must be a non-blank string of at most 200 characters',
  }),
  plan_price: Type.String({
    pattern: PRICE_PATTERN,
    'x-message': 'plan_price must be a non-negative decimal string with at most 2 fraction digits, e.g. "29.99"',
  }),
  plan_currency: Type.String({
    pattern: CURRENCY_PATTERN,
    'x-message': 'plan_currency must be an ISO 4217 currency code of three upper-case letters, e.g. "USD"',
  }),
  plan_duration: Type.String({
    pattern: DURATION_PATTERN,
    'x-message': 'plan_duration must read "N hour|day|week|month|year[s]" with N from 1 to 9999, e.g. "1 month" or "3 months"',
  }),
  plan_price_formatted: Type.String({
    minLength: 1,
    maxLength: 50,
    pattern: '\\S',
    'x-message': 'plan_price_formatted must be a non-blank string of at most 50 characters',
  }),
  plan_data: Type.Object(
    {
      plan_recurring: Type.Optional(Type.Boolean({ 'x-message': 'plan_data.plan_recurring must be true or false' })),
      plan_one_time: Type.Optional(Type.Boolean({ 'x-message': 'plan_data.plan_one_time must be true or false' })),
    },
    { 'x-message': 'plan_data must be an object' },
  ),
  trial_days: Type.Union([Type.Integer({ minimum: 1, maximum: MAX_TRIAL_DAYS }), Type.Null()], {
    description: 'A free trial of a recurring plan, in days; null for none',
    'x-message': `trial_days must be null or an integer from 1 to ${MAX_TRIAL_DAYS}`,
  }),
  reminder_offsets: Type.Union([Type.Array(Type.String({ 'x-message': OFFSETS_MESSAGE }), { maxItems: 10, 'x-message': OFFSETS_MESSAGE }), Type.Null()], {
    description: "The plan's reminder offsets (as the reminder_offsets setting: [\"7d\", \"1d\"], [] for none); null for the project's",
    'x-message': OFFSETS_MESSAGE,
  }),
};

const PlanParams = Type.Object({ project_id: Type.String(), plan_id: Uuid('plan_id') });

export const listPlansSchema = {
  summary: 'List plans, newest first',
  params: ProjectParams,
  querystring: Type.Object(Page()),
  response: { 200: Envelope(Type.Array(Plan), true), ...errorResponses(422) },
};

export const getPlanSchema = {
  summary: 'Get a plan',
  params: PlanParams,
  response: { 200: Envelope(Plan), ...errorResponses(404, 422) },
};

export const createPlanSchema = {
  summary: 'Create a plan',
  params: ProjectParams,
  body: Type.Object({
    plan_name: fields.plan_name,
    plan_price: fields.plan_price,
    // Left out: the project's default_currency setting (docs/plans-targets.md).
    plan_currency: Type.Optional(fields.plan_currency),
    plan_duration: fields.plan_duration,
    plan_price_formatted: Type.Optional(fields.plan_price_formatted),
    plan_data: Type.Optional(fields.plan_data),
    trial_days: Type.Optional(fields.trial_days),
    reminder_offsets: Type.Optional(fields.reminder_offsets),
  }, { examples: [{ plan_name: 'Gold', plan_price: '9.99', plan_currency: 'USD', plan_duration: '1 month' }] }),
  response: { 201: Envelope(Plan), ...errorResponses(422) },
};

export const updatePlanSchema = {
  summary: 'Update a plan (only the fields sent)',
  params: PlanParams,
  body: Type.Object({
    plan_name: Type.Optional(fields.plan_name),
    plan_price: Type.Optional(fields.plan_price),
    plan_currency: Type.Optional(fields.plan_currency),
    plan_duration: Type.Optional(fields.plan_duration),
    plan_price_formatted: Type.Optional(fields.plan_price_formatted),
    plan_data: Type.Optional(fields.plan_data),
    trial_days: Type.Optional(fields.trial_days),
    reminder_offsets: Type.Optional(fields.reminder_offsets),
  }, { examples: [{ plan_price: '12.99' }] }),
  response: { 200: Envelope(Plan), ...errorResponses(404, 422) },
};

export const deletePlanSchema = {
  summary: 'Delete a plan (its members keep access until their end date)',
  params: PlanParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 422) },
};

const PlanTargetParams = Type.Object({ project_id: Type.String(), plan_id: Uuid('plan_id'), target_id: Uuid('target_id') });

export const addPlanTargetSchema = {
  summary: 'Make a plan grant a target (idempotent); a plan grants targets of one platform only',
  params: PlanTargetParams,
  response: { 200: Envelope(Plan), ...errorResponses(404, 422) },
};

export const removePlanTargetSchema = {
  summary: 'Stop a plan granting a target',
  params: PlanTargetParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 422) },
};
