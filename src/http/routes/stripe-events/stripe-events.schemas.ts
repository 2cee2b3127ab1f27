import Type from 'typebox';
import { Envelope, Uuid } from '../../schemas.js';

const ErrorEnvelope = Type.Object({
  ok: Type.Literal(false),
  request_id: Type.String({ format: 'uuid' }),
  method: Type.String(),
  path: Type.String(),
  code: Type.Integer(),
  error: Type.Object({ error_code: Type.String(), message: Type.String() }),
});

const RateLimitEnvelope = Type.Object({
  request_id: Type.String({ format: 'uuid' }),
  method: Type.String(),
  path: Type.String(),
  code: Type.Integer(),
  error: Type.Object({ message: Type.String(), code: Type.String(), retry_after: Type.Integer() }),
});

export const receiveStripeEventSchema = {
  // Stripe's own callback, not an operation of the API: left out of the OpenAPI document (as Telegram's).
  hide: true,
  summary: "Where Stripe sends a merchant account's events (no API key: the Stripe-Signature header is checked)",
  description: 'Each event id is applied once; a repeat answers 200 with result duplicate. docs/payments.md, "What each Stripe event does".',
  params: Type.Object({ merchant_account_id: Uuid('merchant_account_id') }),
  headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String()) }),
  body: Type.String({ description: 'The event as Stripe sent it: JSON, read as the raw bytes its signature covers' }),
  response: {
    200: Envelope(
      Type.Object({
        event_id: Type.String(),
        type: Type.String(),
        result: Type.Union([Type.Literal('applied'), Type.Literal('duplicate')]),
        outcome: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    400: ErrorEnvelope,
    404: ErrorEnvelope,
    409: ErrorEnvelope,
    415: ErrorEnvelope,
    422: ErrorEnvelope,
    429: RateLimitEnvelope,
    500: ErrorEnvelope,
    503: ErrorEnvelope,
  },
};
