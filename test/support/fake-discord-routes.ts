import type { FakeGateway } from './fake-discord-gateway.js';
import type { InteractionsDesk } from './fake-discord-interactions.js';
import { KICK_MEMBERS, MANAGE_ROLES, type Bot, type DiscordWorld, type Guild, type Member } from './fake-discord-model.js';

/**
 * The endpoints the fake Discord serves and the errors it answers, as the docs write them (see the
 * header of fake-discord.ts). When several errors apply: guild, member, role, then permissions.
 */

/** The fake's rate-limit buckets; `PUT` and `DELETE` member role share `memberRoles`. */
export type BucketName =
  | 'currentUser'
  | 'currentApplication'
  | 'guildCommands'
  | 'getGuild'
  | 'listRoles'
  | 'getMember'
  | 'listMembers'
  | 'memberRoles'
  | 'removeMember'
  | 'createDm'
  | 'createMessage'
  | 'gatewayBot';

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: string;
  /** As the docs write it: `/guilds/{guild.id}/members/{user.id}`. */
  template: string;
  pattern: RegExp;
  /** `{guild.id}` is `guild_id`. */
  params: string[];
  bucket: BucketName;
  /** `body` is the request's JSON, undefined when it had none or it was not JSON. */
  handle(bot: Bot, params: Record<string, string>, query: URLSearchParams, body: unknown): Answer;
}

export const SNOWFLAKE = /^\d{1,20}$/;

/** A JSON error (docs: Opcodes and Status Codes, "JSON"; Reference, "Error Messages"). */
export const fail = (status: number, code: number, message: string, errors?: unknown): Answer => ({
  status,
  body: errors === undefined ? { message, code } : { message, code, errors },
});
/**
 * A message's `components` as Discord's reference has them, for the link buttons tenure sends:
 * at most 5 action rows (type 1), each of 1 to 5 buttons (type 2); a Link button (style 5) has a
 * `url` (at most 512 characters, http(s)) and a `label` (at most 80) and no `custom_id`. Anything
 * else (other styles, selects) is refused here, since tenure's DMs carry link buttons only.
 * The rows' buttons, or the sentence Discord's 400 would name.
 */
function linkButtonRows(components: unknown): { label: string; url: string }[][] | string {
  if (components === undefined) return [];
  if (!Array.isArray(components) || components.length > 5) return 'components must be at most 5 action rows';
  const rows: { label: string; url: string }[][] = [];
  for (const row of components as unknown[]) {
    const r = row as { type?: unknown; components?: unknown };
    if (r?.type !== 1 || !Array.isArray(r.components) || r.components.length === 0 || r.components.length > 5) return 'each row must be an action row (type 1) of 1 to 5 components';
    const buttons: { label: string; url: string }[] = [];
    for (const b of r.components as { type?: unknown; style?: unknown; label?: unknown; url?: unknown; custom_id?: unknown }[]) {
      if (b?.type !== 2 || b.style !== 5) return 'only link buttons (type 2, style 5) are accepted here';
      if (b.custom_id !== undefined) return 'a link button cannot have a custom_id';
      if (typeof b.url !== 'string' || b.url.length > 512 || !/^https?:\/\//.test(b.url)) return 'a link button needs a url of at most 512 characters';
      if (typeof b.label !== 'string' || b.label.length === 0 || b.label.length > 80) return 'a link button needs a label of 1 to 80 characters';
      buttons.push({ label: b.label, url: b.url });
    }
    rows.push(buttons);
  }
  return rows;
}

export const invalidField = (field: string, code: string, message: string) =>
  fail(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ code, message }] } });
const unknownGuild = () => fail(404, 10004, 'Unknown Guild');
const unknownMember = () => fail(404, 10007, 'Unknown Member');
const unknownRole = () => fail(404, 10011, 'Unknown Role');
const unknownUser = () => fail(404, 10013, 'Unknown User');
const missingAccess = () => fail(403, 50001, 'Missing Access');
const missingPermissions = () => fail(403, 50013, 'Missing Permissions');
const isAnswer = (value: object): value is Answer => 'status' in value;

export function discordRoutes(world: DiscordWorld, desk: InteractionsDesk, gateway: FakeGateway): Route[] {
  /** The guild the bot may see, or the error Discord gives. */
  const visibleGuild = (bot: Bot, guildId: string): Guild | Answer => {
    const guild = world.guilds.get(guildId);
    if (!guild) return unknownGuild();
    if (!guild.members.has(bot.id)) return missingAccess();
    return guild;
  };
  const targetMember = (guild: Guild, userId: string): Member | Answer => {
    if (world.deletedUsers.has(userId)) return unknownUser();
    return guild.members.get(userId) ?? unknownMember();
  };

  /** Add / Remove Guild Member Role: MANAGE_ROLES, and only roles below the bot's highest role. */
  const changeRole =
    (add: boolean) =>
    (bot: Bot, params: Record<string, string>): Answer => {
      const guild = visibleGuild(bot, params.guild_id!);
      if (isAnswer(guild)) return guild;
      const member = targetMember(guild, params.user_id!);
      if (isAnswer(member)) return member;
      const role = guild.roles.get(params.role_id!);
      if (!role) return unknownRole();
      if (!world.can(guild, bot.id, MANAGE_ROLES)) return missingPermissions();
      if (world.position(guild, role) >= world.highestPosition(guild, bot.id)) return missingPermissions();
      if (role.id !== guild.id && member.roles.has(role.id) !== add) {
        if (add) member.roles.add(role.id);
        else member.roles.delete(role.id);
        world.memberChanged('update', guild, params.user_id!);
      }
      return { status: 204 };
    };

  return [
    // Create DM (docs: User resource): the DM channel object, whoever the user is and whatever their settings.
    route('POST', '/users/@me/channels', 'createDm', (bot, _params, _query, body) => {
      const recipient = (body as { recipient_id?: unknown } | undefined)?.recipient_id;
      if (typeof recipient !== 'string' || !SNOWFLAKE.test(recipient)) return invalidField('recipient_id', 'NUMBER_TYPE_COERCE', `Value "${String(recipient)}" is not snowflake.`);
      if (world.deletedUsers.has(recipient)) return unknownUser();
      return { status: 200, body: desk.openDm(bot.id, recipient) };
    }),
    // Create Message in a DM channel: 403 50007 "Cannot send messages to this user" when the user closed their DMs to the bot.
    route('POST', '/channels/{channel.id}/messages', 'createMessage', (bot, params, _query, body) => {
      const key = desk.dmChannels.get(params.channel_id!);
      if (!key || !key.startsWith(`${bot.id}:`)) return fail(404, 10003, 'Unknown Channel');
      const content = (body as { content?: unknown } | undefined)?.content;
      if (typeof content !== 'string' || content.length === 0) return fail(400, 50006, 'Cannot send an empty message');
      if (content.length > 2000) return invalidField('content', 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.');
      const rows = linkButtonRows((body as { components?: unknown } | undefined)?.components);
      if (typeof rows === 'string') return invalidField('components', 'COMPONENT_INVALID', rows);
      if (desk.closedDms.has(key)) return fail(403, 50007, 'Cannot send messages to this user');
      desk.dms.set(key, [...(desk.dms.get(key) ?? []), content]);
      desk.dmMessages.set(key, [...(desk.dmMessages.get(key) ?? []), { content, buttons: rows }]);
      return { status: 200, body: { id: String(Date.now()), channel_id: params.channel_id, content, type: 0 } };
    }),
    // Get Gateway Bot (docs: Gateway): where the bot's WebSocket connects, and its session start limit.
    route('GET', '/gateway/bot', 'gatewayBot', (bot) => ({ status: 200, body: gateway.gatewayBot(bot) })),
    route('GET', '/users/@me', 'currentUser', (bot) => ({
      status: 200,
      body: { ...world.userJson(bot.id), mfa_enabled: false, locale: 'en-US', premium_type: 0, email: null, verified: true },
    })),
    route('GET', '/applications/@me', 'currentApplication', (bot) => ({ status: 200, body: desk.applicationJson(bot.id) })),
    route('PUT', '/applications/{application.id}/guilds/{guild.id}/commands', 'guildCommands', (bot, params, _query, body) =>
      desk.overwrite(bot.id, params.application_id!, params.guild_id!, body),
    ),
    route('GET', '/guilds/{guild.id}', 'getGuild', (bot, params, query) => {
      const guild = visibleGuild(bot, params.guild_id!);
      return isAnswer(guild) ? guild : { status: 200, body: world.guildJson(guild, query.get('with_counts') === 'true') };
    }),
    route('GET', '/guilds/{guild.id}/roles', 'listRoles', (bot, params) => {
      const guild = visibleGuild(bot, params.guild_id!);
      return isAnswer(guild) ? guild : { status: 200, body: world.rolesJson(guild) };
    }),
    route('GET', '/guilds/{guild.id}/members', 'listMembers', (bot, params, query) => {
      const guild = visibleGuild(bot, params.guild_id!);
      if (isAnswer(guild)) return guild;
      if (!bot.guildMembersIntent) return missingAccess();
      const limitText = query.get('limit') ?? '1';
      if (!/^-?\d+$/.test(limitText)) return invalidField('limit', 'NUMBER_TYPE_COERCE', `Value "${limitText}" is not int.`);
      const limit = Number(limitText);
      if (limit < 1) return invalidField('limit', 'NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.');
      if (limit > 1000) return invalidField('limit', 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 1000.');
      const after = query.get('after') ?? '0';
      if (!SNOWFLAKE.test(after)) return invalidField('after', 'NUMBER_TYPE_COERCE', `Value "${after}" is not snowflake.`);
      return { status: 200, body: world.membersPage(guild, BigInt(after), limit) };
    }),
    route('GET', '/guilds/{guild.id}/members/{user.id}', 'getMember', (bot, params) => {
      const guild = visibleGuild(bot, params.guild_id!);
      if (isAnswer(guild)) return guild;
      const member = targetMember(guild, params.user_id!);
      return isAnswer(member) ? member : { status: 200, body: world.memberJson(params.user_id!, member) };
    }),
    // Remove Guild Member (a kick): KICK_MEMBERS, only members whose highest role is lower, never the owner.
    route('DELETE', '/guilds/{guild.id}/members/{user.id}', 'removeMember', (bot, params) => {
      const guild = visibleGuild(bot, params.guild_id!);
      if (isAnswer(guild)) return guild;
      const userId = params.user_id!;
      const member = targetMember(guild, userId);
      if (isAnswer(member)) return member;
      if (!world.can(guild, bot.id, KICK_MEMBERS) || userId === guild.ownerId) return missingPermissions();
      if (world.highestPosition(guild, userId) >= world.highestPosition(guild, bot.id)) return missingPermissions();
      world.leave(guild, userId);
      return { status: 204 };
    }),
    route('PUT', '/guilds/{guild.id}/members/{user.id}/roles/{role.id}', 'memberRoles', changeRole(true)),
    route('DELETE', '/guilds/{guild.id}/members/{user.id}/roles/{role.id}', 'memberRoles', changeRole(false)),
  ];
}

function route(method: string, template: string, bucket: BucketName, handle: Route['handle']): Route {
  const params: string[] = [];
  const source = template.replace(/\{(\w+)\.id\}/g, (_match, name: string) => {
    params.push(`${name}_id`);
    return '([^/]+)';
  });
  return { method, template, bucket, params, pattern: new RegExp(`^${source}$`), handle };
}
