import Type from 'typebox';
import { Envelope, errorResponses, ProjectParams } from '../../schemas.js';

/**
 * What Telegram posts (https://core.telegram.org/bots/api#update): an Update with its integer
 * `update_id` and at most one kind. Only what tenure reads of the kinds it asks for is required;
 * every other field is let through as sent (Telegram adds fields over time), and other kinds are
 * answered and dropped by the service.
 */

const Id = (what: string) => Type.Integer({ 'x-message': `${what} must be an integer` });
const UserRef = (path: string) => Type.Object({ id: Id(`${path}.id`) });
const ChatRef = (path: string) => Type.Object({ id: Id(`${path}.id`) });
const Member = (path: string) => Type.Object({ status: Type.String(), user: UserRef(`${path}.user`) });
const InviteLink = Type.Object({ invite_link: Type.String() });

const ChatMemberUpdated = (kind: string) =>
  Type.Object({
    chat: ChatRef(`${kind}.chat`),
    from: UserRef(`${kind}.from`),
    date: Type.Integer(),
    old_chat_member: Member(`${kind}.old_chat_member`),
    new_chat_member: Member(`${kind}.new_chat_member`),
    invite_link: Type.Optional(InviteLink),
  });

export const TelegramUpdate = Type.Object({
  update_id: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, 'x-message': 'update_id must be a non-negative integer' }),
  chat_member: Type.Optional(ChatMemberUpdated('chat_member')),
  my_chat_member: Type.Optional(ChatMemberUpdated('my_chat_member')),
  chat_join_request: Type.Optional(
    Type.Object({
      chat: ChatRef('chat_join_request.chat'),
      from: UserRef('chat_join_request.from'),
      user_chat_id: Type.Integer(),
      date: Type.Integer(),
      invite_link: Type.Optional(InviteLink),
    }),
  ),
  // A member talking to the bot (docs/front-desk.md): what the conversation reads; the rest as sent.
  message: Type.Optional(Type.Object({ message_id: Id('message.message_id'), chat: ChatRef('message.chat'), date: Type.Integer() })),
  callback_query: Type.Optional(Type.Object({ id: Type.String({ 'x-message': 'callback_query.id must be a string' }), from: UserRef('callback_query.from') })),
});

export const receiveTelegramUpdateSchema = {
  // Telegram's own callback, not an operation of the API: left out of the OpenAPI document.
  hide: true,
  summary: "Telegram posts a bot's update (TENURE_TELEGRAM_UPDATES=webhook)",
  params: ProjectParams,
  body: TelegramUpdate,
  response: {
    200: Envelope(
      Type.Object({
        update_id: Type.Integer(),
        result: Type.Enum(['stored', 'duplicate', 'ignored'], {
          description: 'stored: new, the bot’s worker handles it; duplicate: stored already; ignored: a kind tenure does not ask for, or a group’s message, dropped',
        }),
      }),
    ),
    ...errorResponses(404, 422),
  },
};
