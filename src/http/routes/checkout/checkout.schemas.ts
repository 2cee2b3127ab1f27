import Type from 'typebox';
import { Envelope, errorResponses, ProjectParams, UserId, Uuid } from '../../schemas.js';

export const Checkout = Type.Object({
  session_id: Type.String({ description: "Stripe's Checkout Session id (cs_…)" }),
  checkout_url: Type.String({ description: 'Send the member here to pay' }),
  mode: Type.Union([Type.Literal('payment'), Type.Literal('subscription')], {
    description: 'subscription for a plan with plan_data.plan_recurring (renewed every plan_duration), else payment (once)',
  }),
  merchant_account_id: Type.String({ format: 'uuid', description: 'The merchant account the session was made with' }),
  coupon_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The coupon the session is discounted by (named, or applied automatically); null for none' }),
  coupon_code: Type.Union([Type.String(), Type.Null()]),
  trial_days: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], { description: "The plan's free trial the subscription starts with; null: this member had their trial, the session charges at once" }),
  ),
});

const Url = (field: string) =>
  Type.String({ minLength: 1, maxLength: 2048, 'x-message': `${field} must be an http:// or https:// URL of at most 2048 characters` });

export const createCheckoutSchema = {
  summary: 'A Stripe Checkout Session for one member and one plan',
  description:
    "The membership is created or extended when Stripe reports the payment (docs/payments.md). A retried call with the same input answers the same session (Stripe idempotency key), so a member is never charged twice for one checkout.",
  params: ProjectParams,
  body: Type.Object({
    plan_id: Uuid('plan_id'),
    user_id: UserId,
    success_url: Url('success_url'),
    cancel_url: Url('cancel_url'),
    coupon: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        'x-message': 'coupon must be a string of 1 to 200 characters',
        description: "A coupon's code (any case): it must exist in the project, be unexpired, have uses left, apply to the plan and, if fixed, be in the plan's currency. Left out, the best fitting auto_apply coupon is used, if any",
      }),
    ),
    merchant_account_id: Type.Optional(Uuid('merchant_account_id')),
  }, { examples: [{ plan_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', user_id: '123456789012345678', success_url: 'https://you.example/thanks', cancel_url: 'https://you.example/plans' }] }),
  response: { 200: Envelope(Checkout), ...errorResponses(404, 409, 422) },
};
