import Type from 'typebox';
import { MAX_CHATS_CHECKED } from '../../../domain/integrations/integrations.service.js';
import { Envelope, errorResponses, InstantString, ProjectParams } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, options?: { description: string }) => Type.Union([t, Type.Null()], options);

const PlatformError = Type.Object({
  code: Type.String({ description: "The platform's error code (Discord's JSON code, e.g. 50013; Telegram's error_code, e.g. 403), or tenure's name for the failure" }),
  message: Type.String(),
});

/** A bot connection as the API shows it: never the token. */
export const Integration = Type.Object({
  platform: Type.Union([Type.Literal('discord'), Type.Literal('telegram')]),
  bot_id: Type.String({ description: "The bot's own user id on the platform" }),
  bot_name: Type.String({ description: "The bot's user name, as the platform gave it when the token was checked" }),
  connected_at: InstantString,
  health: Type.Union([Type.Literal('ok'), Type.Literal('unhealthy')], {
    description: 'unhealthy: the platform stopped taking the token (401); connect again with a new token',
  }),
  last_error: Nullable(PlatformError),
});

export const IntegrationStatus = Type.Object({
  ...Integration.properties,
  targets: Type.Array(
    Type.Object({ target_id: Type.String({ format: 'uuid' }), target_name: Type.String(), health_error: Nullable(PlatformError) }),
    { description: "The project's targets of this platform that the bot cannot act on (Missing Permissions, Unknown Role…)" },
  ),
  access: Type.Object(
    { synced: Type.Integer(), pending: Type.Integer(), waiting_for_member: Type.Integer(), failed: Type.Integer() },
    { description: "The project's access rows of this platform, counted by state" },
  ),
  chats: Type.Optional(
    Type.Array(
      Type.Object({
        target_id: Type.String({ format: 'uuid' }),
        target_name: Type.String(),
        chat_id: Type.String({ description: "The target's external_id: the chat id, or the public chat's @username" }),
        is_admin: Type.Boolean({ description: 'The bot is an administrator (or the owner) of the chat' }),
        can_invite_users: Type.Boolean({ description: 'The bot may create invite links and approve join requests ("Invite users via link")' }),
        can_restrict_members: Type.Boolean({ description: 'The bot may remove members: ban, then unban ("Ban users")' }),
        error: Nullable(PlatformError, {
          description:
            "Why Telegram could not say (the bot is not in the chat or was banned from it, the chat does not exist, Telegram unreachable); the booleans are false then",
        }),
      }),
      {
        description:
          `Telegram only: the bot's rights in each of the project's Telegram target chats (getChatMember), asked when this status is read. ` +
          `At most the ${MAX_CHATS_CHECKED} oldest targets are asked. Access works in a chat where is_admin, can_invite_users and can_restrict_members are all true`,
      },
    ),
  ),
  web_login: Type.Optional(
    Type.Boolean({
      description: "Discord only: Login with Discord works on the public plan page (docs/web.md): the application's client_secret was given with the bot token",
    }),
  ),
  commands_error: Type.Optional(
    Nullable(PlatformError, {
      description:
        'Discord only: why the commands for members (/subscribe, /memberships, /subscribe-panel) could not be registered in a guild of the targets ' +
        '(e.g. 50001 Missing Access: the bot was invited without the applications.commands scope); null once every guild took them. Access is not affected',
    }),
  ),
});

const ClientSecret = Type.String({
  'x-message': 'client_secret must be a string',
  description:
    "Discord only, optional: the application's OAuth2 client secret (Developer Portal → OAuth2), for Login with Discord on the public plan page (docs/web.md); stored encrypted, never returned. Omitted on a reconnection of the same application, the one given before is kept",
});

/** The schemas of one platform's connection routes; `label` names the platform in summaries; Discord's connection takes a client secret too. */
export function integrationSchemas(label: string, o: { clientSecret?: boolean } = {}) {
  return {
    connect: {
      summary: `Connect the project's ${label} bot, or replace it (the token is checked with ${label} first)`,
      params: ProjectParams,
      body: Type.Object({
        bot_token: Type.String({
          'x-message': 'bot_token must be a string',
          description: `The bot's token; checked with ${label} before it is stored, stored encrypted, never returned`,
        }),
        ...(o.clientSecret ? { client_secret: Type.Optional(ClientSecret) } : {}),
      }, { examples: [{ bot_token: 'your-bot-token' }] }),
      response: { 200: Envelope(Integration), ...errorResponses(409, 422) },
    },
    get: {
      summary: `The ${label} bot's connection, the targets it cannot act on, and the access rows by state`,
      params: ProjectParams,
      response: { 200: Envelope(IntegrationStatus), ...errorResponses(404) },
    },
    disconnect: {
      summary: `Disconnect the ${label} bot: its token is deleted and syncing stops; nothing is taken back on ${label}`,
      params: ProjectParams,
      response: { 200: Envelope(Type.Null()), ...errorResponses(404) },
    },
  };
}
