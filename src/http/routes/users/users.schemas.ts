import Type from 'typebox';
import { SEARCH_MAX, SEARCH_MIN } from '../../../domain/users/users.service.js';
import { Envelope, errorResponses, InstantString, Page, PagedEnvelope, UserId } from '../../schemas.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const User = Type.Object({
  user_id: Type.String(),
  user_first_seen: InstantString,
  user_last_seen: InstantString,
  is_admin: Type.Boolean(),
  is_banned: Type.Boolean(),
  user_name: Type.Union([Type.Object({ first_name: NullableString, username: NullableString }), Type.Null()]),
  balance: Type.String({ description: 'Decimal string', examples: ['0.00'] }),
  currency: Type.String({ description: 'ISO 4217 currency code' }),
  unreachable: Type.Array(
    Type.Object({
      platform: Type.Union([Type.Literal('discord'), Type.Literal('telegram')]),
      reason: Type.String({ description: '`dm_closed`, `bot_blocked` or `no_conversation`', examples: ['dm_closed'] }),
      since: InstantString,
    }),
    { description: "The platforms whose bot cannot write to the user (closed DMs, the bot blocked or never started); empty while reachable. Cleared when the user talks to the bot again." },
  ),
  email: Type.Optional(
    Type.String({ description: "tenure's: the e-mail Stripe Checkout collected at the user's last payment, kept when the setting collect_email_on_subscribe is on; present only when there is one" }),
  ),
});

export const listUsersSchema = {
  summary: 'List the users the project has seen, newest first',
  params: Type.Object({ project_id: Type.String() }),
  querystring: Type.Object(Page(10)),
  response: { 200: PagedEnvelope(Type.Array(User)), ...errorResponses(422) },
};

export const searchUsersSchema = {
  summary: 'Search users by id, first name or username (case-insensitive substring)',
  params: Type.Object({ project_id: Type.String() }),
  querystring: Type.Object({
    search: Type.String({
      minLength: SEARCH_MIN,
      maxLength: SEARCH_MAX,
      'x-message': `search must be ${SEARCH_MIN} to ${SEARCH_MAX} characters`,
    }),
    ...Page(10),
  }),
  response: { 200: PagedEnvelope(Type.Array(User)), ...errorResponses(422) },
};

export const getUserSchema = {
  summary: 'Get one user the project has seen',
  params: Type.Object({ project_id: Type.String(), user_id: UserId }),
  response: { 200: Envelope(User), ...errorResponses(404, 422) },
};

const REASON = 'reason must be a string of at most 500 characters, or null';
const BanParams = Type.Object({ project_id: Type.String(), user_id: UserId });

export const banUserSchema = {
  summary: 'Ban a user (no new membership for them in this project)',
  params: BanParams,
  body: Type.Object({
    reason: Type.Optional(
      Type.Union([Type.String({ maxLength: 500, 'x-message': REASON }), Type.Null({ 'x-message': REASON })], { 'x-message': REASON }),
    ),
  }),
  response: {
    200: Envelope(
      Type.Object({
        user_id: Type.String(),
        banned_at: InstantString,
        banned_by: Type.Union([Type.String({ description: 'The id of the API key that banned the user' }), Type.Null()]),
        banned_reason: NullableString,
      }),
    ),
    ...errorResponses(409, 422),
  },
};

export const unbanUserSchema = {
  summary: 'Lift a ban',
  params: BanParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 422) },
};
