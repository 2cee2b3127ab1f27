/**
 * The fake Discord's world: bots, guilds, roles and members, with Discord's permission and role
 * hierarchy rules (docs: Permissions) and the JSON shapes of the User, Guild and Permissions
 * resources. See the header of fake-discord.ts for the sources.
 */

export interface FakeBotInput {
  token: string;
  id: string;
  username: string;
  /** The GUILD_MEMBERS privileged intent, switched on in the Developer Portal (default true). */
  guildMembersIntent?: boolean;
}

export interface FakeGuildInput {
  id: string;
  name?: string;
  /** The owner, a member of the guild (default: a new user). */
  ownerId?: string;
  /** The bots the owner has added (default: every bot, including bots added later). */
  ownerBots?: string[];
}

export interface FakeRoleInput {
  id: string;
  /** Above 0 (`@everyone`); a bot manages only roles below its highest role. */
  position: number;
  name?: string;
  /** Permission bit set, as Discord writes it (default "0"). */
  permissions?: string;
}

const DISCORD_EPOCH = 1_420_070_400_000n;
let increment = 0n;

/**
 * A new snowflake (docs: Reference, "Snowflakes"). Use real-sized ids in tests: @discordjs/rest
 * recognises a guild id as the bucket's major parameter only at 17 to 19 digits.
 */
export function fakeSnowflake(): string {
  increment = (increment + 1n) & 0xfffn;
  return String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (BigInt(process.pid & 0x3ff) << 12n) | increment);
}

export const ADMINISTRATOR = 1n << 3n;
export const KICK_MEMBERS = 1n << 1n;
export const MANAGE_ROLES = 1n << 28n;
/** The docs' example `@everyone` permissions (Guild resource, "Get Guild"): no moderation bits. */
const EVERYONE_PERMISSIONS = 49_794_752n;

export interface Role {
  id: string;
  name: string;
  /** null: the bot's managed role, kept above every other role until a test moves it. */
  position: number | null;
  permissions: bigint;
  botId?: string;
}

export interface Member {
  id: bigint;
  roles: Set<string>;
  joinedAt: number;
}

export interface Guild {
  id: string;
  name: string;
  ownerId: string;
  /** Bots the owner added, or 'all'; `removedBots` wins over 'all'. */
  bots: 'all' | Set<string>;
  removedBots: Set<string>;
  /** `@everyone` has the guild's id. */
  roles: Map<string, Role>;
  members: Map<string, Member>;
}

export interface Bot {
  id: string;
  token: string;
  username: string;
  guildMembersIntent: boolean;
}

/** ISO 8601 as Discord writes it: "2015-04-26T06:26:56.936000+00:00". */
const timestamp = (ms: number) => new Date(ms).toISOString().replace('Z', '000+00:00');
const byId = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/** A change of a guild's members the gateway tells connected bots of (fake-discord-gateway.ts). */
export type MemberChange = { kind: 'add' | 'update' | 'remove'; guild: Guild; userId: string };

export class DiscordWorld {
  /** Told of every member joining, leaving or whose roles change, whoever made the change. */
  readonly memberListeners: ((change: MemberChange) => void)[] = [];
  readonly bots = new Map<string, Bot>();
  readonly botsByToken = new Map<string, Bot>();
  readonly guilds = new Map<string, Guild>();
  /** Deleted accounts: calls about them answer 10013 Unknown User. */
  readonly deletedUsers = new Set<string>();

  // ---- Discord's rules (docs: Permissions, "Permission Hierarchy") ----------------------------

  position(guild: Guild, role: Role): number {
    if (role.position !== null) return role.position;
    let top = 0;
    for (const other of guild.roles.values()) if (other.position !== null) top = Math.max(top, other.position);
    return top + 1;
  }

  /** The position of the member's highest role (`@everyone`: 0); the owner is above all. */
  highestPosition(guild: Guild, userId: string): number {
    if (userId === guild.ownerId) return Number.POSITIVE_INFINITY;
    let highest = 0;
    for (const roleId of guild.members.get(userId)?.roles ?? []) highest = Math.max(highest, this.position(guild, guild.roles.get(roleId)!));
    return highest;
  }

  /** Guild-level permissions: `@everyone` and every role of the member; the owner and ADMINISTRATOR have all. */
  can(guild: Guild, userId: string, permission: bigint): boolean {
    if (userId === guild.ownerId) return true;
    let bits = guild.roles.get(guild.id)!.permissions;
    for (const roleId of guild.members.get(userId)?.roles ?? []) bits |= guild.roles.get(roleId)!.permissions;
    return (bits & ADMINISTRATOR) !== 0n || (bits & permission) !== 0n;
  }

  // ---- changes the tests make ------------------------------------------------------------------

  memberChanged(kind: MemberChange['kind'], guild: Guild, userId: string): void {
    for (const listener of this.memberListeners) listener({ kind, guild, userId });
  }

  guild(guildId: string): Guild {
    const guild = this.guilds.get(guildId);
    if (!guild) throw new Error(`fake discord: no guild ${guildId}`);
    return guild;
  }

  bot(botId: string): Bot {
    const bot = this.bots.get(botId);
    if (!bot) throw new Error(`fake discord: no bot ${botId}`);
    return bot;
  }

  botRole(guildId: string, botId: string): Role {
    for (const role of this.guild(guildId).roles.values()) if (role.botId === botId) return role;
    throw new Error(`fake discord: bot ${botId} is not in guild ${guildId}`);
  }

  addBot(input: FakeBotInput): void {
    if (this.bots.has(input.id) || this.botsByToken.has(input.token)) throw new Error(`fake discord: bot ${input.id} or its token exists`);
    const bot: Bot = { id: input.id, token: input.token, username: input.username, guildMembersIntent: input.guildMembersIntent ?? true };
    this.bots.set(bot.id, bot);
    this.botsByToken.set(bot.token, bot);
    for (const guild of this.guilds.values()) {
      if (guild.bots === 'all' ? !guild.removedBots.has(bot.id) : guild.bots.has(bot.id)) this.join(guild, bot);
    }
  }

  resetToken(botId: string, newToken: string): void {
    const bot = this.bot(botId);
    this.botsByToken.delete(bot.token);
    bot.token = newToken;
    this.botsByToken.set(newToken, bot);
  }

  addGuild(input: FakeGuildInput): void {
    if (this.guilds.has(input.id)) throw new Error(`fake discord: guild ${input.id} exists`);
    const ownerId = input.ownerId ?? fakeSnowflake();
    const guild: Guild = {
      id: input.id,
      name: input.name ?? `Guild ${input.id}`,
      ownerId,
      bots: input.ownerBots ? new Set(input.ownerBots) : 'all',
      removedBots: new Set(),
      roles: new Map([[input.id, { id: input.id, name: '@everyone', position: 0, permissions: EVERYONE_PERMISSIONS }]]),
      members: new Map([[ownerId, { id: BigInt(ownerId), roles: new Set(), joinedAt: Date.now() }]]),
    };
    this.guilds.set(guild.id, guild);
    for (const bot of this.bots.values()) if (guild.bots === 'all' || guild.bots.has(bot.id)) this.join(guild, bot);
  }

  /** The bot joins with its managed role, named after it, holding MANAGE_ROLES and KICK_MEMBERS. */
  join(guild: Guild, bot: Bot): void {
    guild.removedBots.delete(bot.id);
    if (guild.bots !== 'all') guild.bots.add(bot.id);
    if (guild.members.has(bot.id)) return;
    const role: Role = { id: fakeSnowflake(), name: bot.username, position: null, permissions: MANAGE_ROLES | KICK_MEMBERS, botId: bot.id };
    guild.roles.set(role.id, role);
    guild.members.set(bot.id, { id: BigInt(bot.id), roles: new Set([role.id]), joinedAt: Date.now() });
  }

  /** A member leaves (or is kicked); a bot takes its managed role along. */
  leave(guild: Guild, userId: string): void {
    if (guild.members.delete(userId)) this.memberChanged('remove', guild, userId);
    for (const role of guild.roles.values()) if (role.botId === userId) guild.roles.delete(role.id);
    if (this.bots.has(userId)) {
      guild.removedBots.add(userId);
      if (guild.bots !== 'all') guild.bots.delete(userId);
    }
  }

  addRole(guildId: string, input: FakeRoleInput): void {
    const guild = this.guild(guildId);
    if (guild.roles.has(input.id)) throw new Error(`fake discord: role ${input.id} exists`);
    if (input.position < 1) throw new Error('fake discord: position 0 is @everyone');
    guild.roles.set(input.id, { id: input.id, name: input.name ?? `role ${input.id}`, position: input.position, permissions: BigInt(input.permissions ?? '0') });
  }

  removeRole(guildId: string, roleId: string): void {
    const guild = this.guild(guildId);
    this.checkRoles(guild, [roleId]);
    guild.roles.delete(roleId);
    for (const member of guild.members.values()) member.roles.delete(roleId);
  }

  addMember(guildId: string, userId: string, roleIds: string[]): void {
    const guild = this.guild(guildId);
    if (guild.members.has(userId)) throw new Error(`fake discord: ${userId} is already in guild ${guildId} (setMemberRoles edits roles)`);
    if (this.deletedUsers.has(userId)) throw new Error(`fake discord: user ${userId} was deleted`);
    this.checkRoles(guild, roleIds);
    guild.members.set(userId, { id: BigInt(userId), roles: new Set(roleIds), joinedAt: Date.now() });
    this.memberChanged('add', guild, userId);
  }

  setMemberRoles(guildId: string, userId: string, roleIds: string[]): void {
    const guild = this.guild(guildId);
    const member = guild.members.get(userId);
    if (!member) throw new Error(`fake discord: ${userId} is not in guild ${guildId}`);
    this.checkRoles(guild, roleIds);
    const managed = [...member.roles].filter((roleId) => guild.roles.get(roleId)?.botId === userId);
    member.roles = new Set([...managed, ...roleIds]);
    this.memberChanged('update', guild, userId);
  }

  deleteUser(userId: string): void {
    this.deletedUsers.add(userId);
    for (const guild of this.guilds.values()) this.leave(guild, userId);
  }

  private checkRoles(guild: Guild, roleIds: string[]): void {
    for (const roleId of roleIds) {
      if (!guild.roles.has(roleId) || roleId === guild.id) throw new Error(`fake discord: no role ${roleId} in guild ${guild.id}`);
    }
  }

  // ---- JSON shapes (docs: User, Guild and Permissions resources) -------------------------------

  userJson(userId: string) {
    const bot = this.bots.get(userId);
    return {
      id: userId,
      username: bot?.username ?? `user${userId.slice(-6)}`,
      discriminator: '0',
      global_name: null,
      avatar: null,
      ...(bot ? { bot: true } : {}),
      banner: null,
      accent_color: null,
      flags: 0,
      public_flags: 0,
      avatar_decoration_data: null,
      collectibles: null,
      primary_guild: null,
    };
  }

  rolesJson(guild: Guild) {
    return [...guild.roles.values()]
      .map((role) => ({
        id: role.id,
        name: role.name,
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: this.position(guild, role),
        permissions: String(role.permissions),
        managed: role.botId !== undefined,
        mentionable: false,
        flags: 0,
        ...(role.botId ? { tags: { bot_id: role.botId } } : {}),
      }))
      .sort((a, b) => a.position - b.position || byId(BigInt(a.id), BigInt(b.id)));
  }

  memberJson(userId: string, member: Member) {
    return {
      user: this.userJson(userId),
      nick: null,
      avatar: null,
      banner: null,
      roles: [...member.roles],
      joined_at: timestamp(member.joinedAt),
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0,
      pending: false,
      communication_disabled_until: null,
    };
  }

  /** Members in ascending user id, after `after`, at most `limit` (List Guild Members). */
  membersPage(guild: Guild, after: bigint, limit: number) {
    return [...guild.members]
      .filter(([, member]) => member.id > after)
      .sort(([, a], [, b]) => byId(a.id, b.id))
      .slice(0, limit)
      .map(([userId, member]) => this.memberJson(userId, member));
  }

  guildJson(guild: Guild, withCounts: boolean) {
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      owner_id: guild.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      widget_enabled: false,
      widget_channel_id: null,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      roles: this.rolesJson(guild),
      emojis: [],
      features: [],
      mfa_level: 0,
      application_id: null,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      max_presences: null,
      max_members: 500_000,
      vanity_url_code: null,
      description: null,
      banner: null,
      premium_tier: 0,
      premium_subscription_count: 0,
      preferred_locale: 'en-US',
      public_updates_channel_id: null,
      max_video_channel_users: 25,
      max_stage_video_channel_users: 50,
      nsfw_level: 0,
      stickers: [],
      premium_progress_bar_enabled: false,
      safety_alerts_channel_id: null,
      incidents_data: null,
      ...(withCounts ? { approximate_member_count: guild.members.size, approximate_presence_count: 0 } : {}),
    };
  }
}
