import Type from 'typebox';
import { PAYMENT_STATUSES } from '../../../domain/payments/payments.service.js';
import { CursorParam } from '../../cursor.js';
import { CursorListEnvelope, errorResponses, InstantString, Page, ProjectParams, QueryInstant, UserId } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const Payment = Type.Object({
  payment_id: Type.String({ format: 'uuid' }),
  provider: Type.String({ examples: ['stripe'] }),
  merchant_account_id: Nullable(Type.String({ format: 'uuid' })),
  user_id: Type.String(),
  plan_id: Nullable(Type.String({ format: 'uuid' })),
  amount: Type.String({ description: "Decimal string in the currency's unit", examples: ['29.99'] }),
  amount_minor: Type.Integer({ description: "In the currency's smallest unit, as Stripe counts it", examples: [2999] }),
  currency: Type.String({ examples: ['USD'] }),
  status: Type.Enum([...PAYMENT_STATUSES]),
  checkout_session_id: Nullable(Type.String()),
  payment_intent_id: Nullable(Type.String()),
  invoice_id: Nullable(Type.String()),
  subscription_id: Nullable(Type.String()),
  customer_id: Nullable(Type.String()),
  created_at: InstantString,
  updated_at: InstantString,
});

export const listPaymentsSchema = {
  summary: "List the project's payments, newest first",
  params: ProjectParams,
  querystring: Type.Object({ ...Page(), ...paymentFilters(), cursor: CursorParam }),
  response: { 200: CursorListEnvelope(Type.Array(Payment)), ...errorResponses(422) },
};

/** The filters of `GET /payments`, which its export takes too. */
export function paymentFilters() {
  return {
    user_id: Type.Optional(UserId),
    status: Type.Optional(Type.Enum([...PAYMENT_STATUSES], { 'x-message': `status must be one of: ${PAYMENT_STATUSES.join(', ')}` })),
    created_before: Type.Optional(QueryInstant('created_before')),
    created_after: Type.Optional(QueryInstant('created_after')),
  };
}
