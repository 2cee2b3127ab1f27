import Type from 'typebox';
import {
  CODE_PATTERN,
  COUPON_TYPES,
  INVITEE_MODES,
  MAX_FIXED_AMOUNT,
  MAX_PLAN_IDS,
  MAX_RENEWAL_MONTHS,
  PLAN_SCOPES,
  RENEWAL_CONSTRAINTS,
} from '../../../domain/payments/coupon-rules.js';
import { CURRENCY_PATTERN } from '../../../domain/plans/plan-rules.js';
import { Envelope, errorResponses, Instant, InstantString, Page, ProjectParams, Uuid } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const oneOf = (field: string, values: readonly string[], description?: string) => ({
  'x-message': `${field} must be one of: ${values.join(', ')}`,
  ...(description ? { description } : {}),
});

/** A coupon as the API shows it (docs/coupons.md). */
export const Coupon = Type.Object({
  coupon_id: Type.String({ format: 'uuid' }),
  code: Type.String({ examples: ['SPRING25'] }),
  coupon_type: Type.Enum([...COUPON_TYPES]),
  amount: Type.Integer({ description: "percentage: percent off (1-100); fixed: the amount off in the currency's smallest unit (500 = 5.00 USD)" }),
  currency: Nullable(Type.String({ description: "A fixed coupon's currency (ISO 4217); null for a percentage" })),
  renewal_constraint: Type.Enum([...RENEWAL_CONSTRAINTS]),
  renewal_months: Nullable(Type.Integer()),
  auto_apply: Type.Boolean(),
  invitee_mode: Type.Enum([...INVITEE_MODES]),
  plan_scope: Type.Enum([...PLAN_SCOPES]),
  plan_ids: Type.Array(Type.String({ format: 'uuid' })),
  max_uses: Nullable(Type.Integer()),
  uses: Type.Integer({ description: 'Uses taken by checkouts (reserved when the session is made, given back when it expires unpaid)' }),
  expires_at: Nullable(InstantString),
  created_at: InstantString,
  updated_at: InstantString,
});

const fields = {
  code: Type.String({
    pattern: CODE_PATTERN,
    'x-message': 'code must be 1 to 64 letters, digits, - or _, starting with a letter or digit',
    description: 'What the member types; unique in the project whatever its case',
  }),
  auto_apply: Type.Boolean({ 'x-message': 'auto_apply must be true or false', description: 'Applied at checkout when no coupon is given (the best fitting one)' }),
  invitee_mode: Type.Enum([...INVITEE_MODES], oneOf('invitee_mode', INVITEE_MODES, 'any; new_members: users who never had a membership in the project; existing_members: users who have or had one')),
  plan_scope: Type.Enum([...PLAN_SCOPES], oneOf('plan_scope', PLAN_SCOPES, 'all plans, or the plans in plan_ids')),
  plan_ids: Type.Array(Uuid('plan_ids[]'), { minItems: 1, maxItems: MAX_PLAN_IDS, 'x-message': `plan_ids must be an array of 1 to ${MAX_PLAN_IDS} plan ids` }),
  max_uses: Type.Integer({ minimum: 1, maximum: 1_000_000_000, 'x-message': 'max_uses must be an integer from 1 to 1000000000 (or null: unlimited)' }),
};

const CouponParams = Type.Object({ project_id: Type.String(), coupon_id: Uuid('coupon_id') });

/** The body fields that hold an instant: their schema errors take the original API's two-entry 422 (src/http/errors.ts). */
export const COUPON_INSTANT_FIELDS = ['expires_at'] as const;

export const createCouponSchema = {
  summary: 'Create a coupon',
  description: 'Applied at checkout (`coupon`, or automatically with auto_apply) as a Stripe coupon; its discount terms are fixed once made (docs/coupons.md).',
  params: ProjectParams,
  body: Type.Object({
    code: fields.code,
    coupon_type: Type.Enum([...COUPON_TYPES], oneOf('coupon_type', COUPON_TYPES)),
    amount: Type.Integer({
      minimum: 1,
      maximum: MAX_FIXED_AMOUNT,
      'x-message': `amount must be an integer from 1 to ${MAX_FIXED_AMOUNT}`,
      description: "percentage: percent off (1-100); fixed: the amount off in the currency's smallest unit",
    }),
    currency: Type.Optional(Type.String({ pattern: CURRENCY_PATTERN, 'x-message': 'currency must be an ISO 4217 currency code of three upper-case letters, e.g. "USD"', description: 'Required for fixed, refused for percentage' })),
    renewal_constraint: Type.Optional(
      Type.Enum([...RENEWAL_CONSTRAINTS], oneOf('renewal_constraint', RENEWAL_CONSTRAINTS, 'Which payments of a subscription are discounted: first_payment (default; Stripe duration once), every_payment (forever), months (repeating, renewal_months)')),
    ),
    renewal_months: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RENEWAL_MONTHS, 'x-message': `renewal_months must be an integer from 1 to ${MAX_RENEWAL_MONTHS}` })),
    auto_apply: Type.Optional(fields.auto_apply),
    invitee_mode: Type.Optional(fields.invitee_mode),
    plan_scope: Type.Optional(fields.plan_scope),
    plan_ids: Type.Optional(fields.plan_ids),
    max_uses: Type.Optional(Nullable(fields.max_uses)),
    expires_at: Type.Optional(Instant),
  }, { examples: [{ code: 'SPRING25', coupon_type: 'percentage', amount: 25, max_uses: 100, expires_at: '2036-06-01T00:00:00.000Z' }] }),
  response: { 201: Envelope(Coupon), ...errorResponses(409, 422) },
};

export const listCouponsSchema = {
  summary: "List the project's coupons, newest first",
  params: ProjectParams,
  querystring: Type.Object(Page()),
  response: { 200: Envelope(Type.Array(Coupon), true), ...errorResponses(422) },
};

export const getCouponSchema = {
  summary: 'Get a coupon',
  params: CouponParams,
  response: { 200: Envelope(Coupon), ...errorResponses(404, 422) },
};

const Fixed = (field: string) => Type.Optional(Type.Unknown({ description: `Refused: ${field} is fixed once the coupon is made` }));

export const updateCouponSchema = {
  summary: "Change a coupon's code, limits or scope (only the fields sent); its discount terms are fixed",
  params: CouponParams,
  body: Type.Object({
    code: Type.Optional(fields.code),
    auto_apply: Type.Optional(fields.auto_apply),
    invitee_mode: Type.Optional(fields.invitee_mode),
    plan_scope: Type.Optional(fields.plan_scope),
    plan_ids: Type.Optional(fields.plan_ids),
    max_uses: Type.Optional(Nullable(fields.max_uses)),
    expires_at: Type.Optional(Nullable(Instant)),
    coupon_type: Fixed('coupon_type'),
    amount: Fixed('amount'),
    currency: Fixed('currency'),
    renewal_constraint: Fixed('renewal_constraint'),
    renewal_months: Fixed('renewal_months'),
  }, { examples: [{ max_uses: 200 }] }),
  response: { 200: Envelope(Coupon), ...errorResponses(404, 409, 422) },
};

export const deleteCouponSchema = {
  summary: 'Delete a coupon: checkouts can no longer use it; sessions already made keep their discount',
  params: CouponParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 422) },
};
