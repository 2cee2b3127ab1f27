import Type from 'typebox';
import { Envelope, errorResponses, InstantString, Page, ProjectParams, Uuid } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const NullableInstant = Nullable(InstantString);

/** A webhook as the API shows it; the secret is never part of it (see rotate-secret). */
export const Webhook = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.Union([Type.Literal('manual'), Type.Literal('failing')])),
  disabled_at: NullableInstant,
  failing_since: NullableInstant,
  previous_secret_expires_at: NullableInstant,
  created_at: InstantString,
  updated_at: InstantString,
});

const Attempt = Type.Object({
  attempt: Type.Integer({ description: 'The X-Webhook-Attempt it was sent with' }),
  attempted_at: InstantString,
  status_code: Nullable(Type.Integer()),
  duration_ms: Type.Integer(),
  error_class: Nullable(Type.String({ description: 'http_status | redirect | timeout | connection | tls | dns | blocked_address | signing (this instance cannot open the stored signing secret: nothing was sent)' })),
  error_message: Nullable(Type.String()),
  response_excerpt: Nullable(Type.String({ description: 'The first 1 KiB of the response body' })),
  outcome: Type.String({ description: 'delivered | retry | dropped | exhausted' }),
  next_attempt_at: NullableInstant,
});

export const Delivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  webhook_id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ format: 'uuid' }),
  event_type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')]),
  attempt_count: Type.Integer(),
  next_attempt_at: NullableInstant,
  created_at: InstantString,
  completed_at: NullableInstant,
  replay_of: Nullable(Type.String({ format: 'uuid' })),
  attempts: Type.Array(Attempt),
});

const WebhookParams = Type.Object({ project_id: Type.String(), webhook_id: Uuid('webhook_id') });
const DeliveryParams = Type.Object({ project_id: Type.String(), webhook_id: Uuid('webhook_id'), delivery_id: Uuid('delivery_id') });

export const createWebhookSchema = {
  summary: 'Create a webhook',
  params: ProjectParams,
  body: Type.Object({ url: Type.String({ 'x-message': 'url must be a string' }) }, { examples: [{ url: 'https://example.com/tenure-hook' }] }),
  response: {
    200: Envelope(Type.Object({ url: Type.String(), id: Type.String({ format: 'uuid' }), secret: Type.String() })),
    ...errorResponses(409, 422),
  },
};

export const deleteWebhookSchema = {
  summary: 'Delete a webhook (its pending deliveries are cancelled)',
  params: WebhookParams,
  response: { 200: Envelope(Type.Null()), ...errorResponses(404, 422) },
};

export const listWebhooksSchema = {
  summary: 'List webhooks, newest first',
  params: ProjectParams,
  querystring: Type.Object(Page()),
  response: { 200: Envelope(Type.Array(Webhook), true), ...errorResponses(422) },
};

export const getWebhookSchema = {
  summary: 'Get a webhook',
  params: WebhookParams,
  response: { 200: Envelope(Webhook), ...errorResponses(404, 422) },
};

export const updateWebhookSchema = {
  summary: 'Enable or disable a webhook (disabling cancels its pending deliveries)',
  params: WebhookParams,
  body: Type.Object({ enabled: Type.Boolean({ 'x-message': 'enabled must be a boolean' }) }),
  response: { 200: Envelope(Webhook), ...errorResponses(404, 422) },
};

export const rotateSecretSchema = {
  summary: 'Rotate the signing secret (the old one keeps signing alongside for 24 hours)',
  params: WebhookParams,
  response: {
    200: Envelope(Type.Object({ ...Webhook.properties, secret: Type.String({ description: 'The new secret, shown only here' }) })),
    ...errorResponses(404, 422),
  },
};

export const testWebhookSchema = {
  summary: 'Send a webhook.test event to this webhook',
  params: WebhookParams,
  response: {
    202: Envelope(Type.Object({ event_id: Type.String({ format: 'uuid' }), delivery_id: Type.String({ format: 'uuid' }) })),
    ...errorResponses(404, 409, 422),
  },
};

export const listDeliveriesSchema = {
  summary: "A webhook's deliveries, newest first, with every attempt",
  params: WebhookParams,
  querystring: Type.Object({
    ...Page(),
    status: Type.Optional(
      // The message on each branch: validation reports the first branch that failed.
      Type.Union(
        (['pending', 'delivered', 'failed', 'cancelled'] as const).map((s) =>
          Type.Literal(s, { 'x-message': 'status must be one of pending, delivered, failed, cancelled' }),
        ),
      ),
    ),
  }),
  response: { 200: Envelope(Type.Array(Delivery), true), ...errorResponses(404, 422) },
};

export const getDeliverySchema = {
  summary: 'Get one delivery with every attempt',
  params: DeliveryParams,
  response: { 200: Envelope(Delivery), ...errorResponses(404, 422) },
};

export const replayDeliverySchema = {
  summary: 'Send a delivery again: a new delivery of the same event, due at once',
  params: DeliveryParams,
  response: { 202: Envelope(Delivery), ...errorResponses(404, 409, 422) },
};

export const replayRangeSchema = {
  summary: 'Send again every event of the project emitted in [since, until) to this webhook',
  params: WebhookParams,
  querystring: Type.Object({
    since: Type.String({ 'x-message': 'since is required: YYYY-MM-DDTHH:MM:SS.mmmZ' }),
    until: Type.Optional(Type.String({ 'x-message': 'until must be YYYY-MM-DDTHH:MM:SS.mmmZ' })),
  }),
  response: {
    202: Envelope(Type.Object({ replayed: Type.Integer(), since: InstantString, until: InstantString })),
    ...errorResponses(404, 409, 422),
  },
};
