import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { StripeEventsService } from '../../../domain/payments/stripe-events.service.js';
import { AppError } from '../../../domain/errors.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { receiveStripeEventSchema } from './stripe-events.schemas.js';

const MESSAGES = { applied: 'Event applied', duplicate: 'Event received already: nothing changed' } as const;

/**
 * `POST /v2/stripe/events/{merchant_account_id}`: where Stripe sends a merchant account's events
 * (docs/payments.md, "The webhook endpoint"). No API key (Stripe has none of tenure's): the
 * `Stripe-Signature` header is checked against the raw body with the account's signing secret,
 * so this plugin reads JSON bodies as text, unparsed. Bounded per merchant account, not by IP
 * (docs/rate-limits.md, "Platform callbacks"): Stripe sends every account's events from a few addresses.
 */
export const stripeEventsRoutes: FastifyPluginAsyncTypebox<{ stripeEvents: StripeEventsService }> = async (app, { stripeEvents }) => {
  // This plugin's own parser (encapsulated): the signature covers the bytes, not a re-serialisation.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser('*', (_request, _payload, done) => done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Stripe events are JSON (Content-Type: application/json)'), undefined));

  app.post('/v2/stripe/events/:merchant_account_id', { schema: receiveStripeEventSchema, config: { public: true, callback: { platform: 'stripe', endpoint: 'merchant_account_id' } } }, async (request, reply) => {
    const receipt = unwrap(await stripeEvents.receive(request.params.merchant_account_id, request.body ?? '', request.headers['stripe-signature']));
    return sendSuccess(reply, 200, { message: MESSAGES[receipt.result], data: receipt });
  });
};
