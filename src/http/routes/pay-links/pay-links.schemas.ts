import Type from 'typebox';
import { Envelope, errorResponses, InstantString, ProjectParams, UserId, Uuid } from '../../schemas.js';

export const PayLink = Type.Object({
  pay_link_id: Type.String({ description: 'The link\'s secret id: 32 characters of A-Za-z0-9_- (it fits a Telegram /start payload)' }),
  url: Type.String({ description: '{TENURE_PUBLIC_URL}/pay/{pay_link_id}: give it to this member only; opening it goes to Stripe\'s checkout page' }),
  expires_at: InstantString,
});

export const createPayLinkSchema = {
  summary: 'A pay link: one plan for one member, paid on Stripe\'s checkout page',
  description:
    'The link is bound to the member before any money moves: whoever opens it pays for user_id, and only once. It is valid 24 hours; the Checkout Session is made when the link is first opened (docs/front-desk.md).',
  params: ProjectParams,
  body: Type.Object({
    plan_id: Uuid('plan_id'),
    user_id: UserId,
    coupon: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        'x-message': 'coupon must be a string of 1 to 200 characters',
        description: "A coupon's code, checked when the link is opened (as POST /checkout checks it). Left out, the best fitting auto_apply coupon is used, if any",
      }),
    ),
  }, { examples: [{ plan_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', user_id: '123456789012345678' }] }),
  response: { 200: Envelope(PayLink), ...errorResponses(404, 409, 422) },
};
