import Type from 'typebox';
import { Envelope, errorResponses, InstantString, UserId } from '../../schemas.js';

export const PortalLink = Type.Object({
  url: Type.String({ description: '{TENURE_PUBLIC_URL}/portal/{token}: give it to this member only' }),
  expires_at: InstantString,
});

export const createPortalLinkSchema = {
  summary: "A single-use link to the member's portal: memberships, payments and Stripe billing",
  description:
    'Valid 15 minutes and opened once: the browser that opens it keeps the page for 30 minutes; the link opens nothing after (docs/front-desk.md).',
  params: Type.Object({ project_id: Type.String(), user_id: UserId }),
  response: { 200: Envelope(PortalLink), ...errorResponses(422) },
};
