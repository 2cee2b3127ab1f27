import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { banned, rateLimited, RateLimits, type BucketLimit, type InvalidRequestLimit } from './fake-discord-limits.js';
import { DiscordWorld, KICK_MEMBERS, MANAGE_ROLES, type Bot, type FakeBotInput, type FakeGuildInput, type FakeRoleInput } from './fake-discord-model.js';
import { discordRoutes, fail, invalidField, SNOWFLAKE, type Answer, type BucketName } from './fake-discord-routes.js';
import { FakeGateway, type FakeGatewayOptions } from './fake-discord-gateway.js';
import { OAuthDesk, type FakeOAuth } from './fake-discord-oauth.js';
import { InteractionsDesk, type FakeCommand, type FakeDmMessage, type FakeOriginalEdit, type SignedInteraction } from './fake-discord-interactions.js';

/**
 * A local fake of Discord's REST API (node:http on 127.0.0.1, port 0) for the endpoints tenure calls:
 * the oracle of every access test and of the benchmark. Written from Discord's documentation
 * (https://discord.com/developers/docs, "docs" below) and, where the docs give no number, from
 * values observed and published by others; not from what tenure happens to send.
 *
 * Behaviour, and where it comes from:
 * - Base URL `<url>/v{9,10}` (`url` ends in `/api`, like https://discord.com/api); other versions
 *   answer 400 `{code: 50041}` — docs: Reference, "API Versioning".
 * - `Authorization: Bot <token>`; missing, other schemes or unknown tokens answer 401
 *   `{"message": "401: Unauthorized", "code": 0}` — docs: Reference, "Authentication"; Opcodes and
 *   Status Codes, "HTTP Response Codes". `resetToken` models the portal's Reset Token.
 * - Endpoints (docs: User, Guild, Permissions resources): `GET /users/@me` (the bot's user object,
 *   `discriminator: "0"`, `bot: true`); `GET /guilds/{guild.id}` (`?with_counts=true` adds the
 *   approximate counts); `GET /guilds/{guild.id}/roles` (`@everyone` has the guild's id and position
 *   0; each bot has its managed role, tagged `bot_id`); `GET /guilds/{guild.id}/members/{user.id}`;
 *   `GET /guilds/{guild.id}/members?limit=1..1000&after=<snowflake>` (defaults 1 and 0; members in
 *   ascending user id after `after`; bots and the owner are members too; needs the GUILD_MEMBERS
 *   privileged intent — without it 403 50001 Missing Access, as Discord answers:
 *   discord-api-docs#2629, bwmarrin/discordgo#1450); `PUT` / `DELETE
 *   /guilds/{guild.id}/members/{user.id}/roles/{role.id}` (204, idempotent, MANAGE_ROLES);
 *   `DELETE /guilds/{guild.id}/members/{user.id}` (204, KICK_MEMBERS); Create DM `POST
 *   /users/@me/channels` `{recipient_id}` (the DM channel object, type 1) and Create Message `POST
 *   /channels/{channel.id}/messages` `{content, components?}` in it (link buttons only), recorded per user (`dms`, `dmMessages`); a user who closed
 *   their DMs to the bot (`setDmsClosed`) gets 403 `{"message": "Cannot send messages to this
 *   user", "code": 50007}` (docs: Opcodes and Status Codes, "JSON Error Codes"). `X-Audit-Log-Reason` is
 *   accepted (URI-decoded into the call's `reason`) and changes nothing.
 * - Errors, JSON `{message, code}` (docs: Opcodes and Status Codes, "JSON Error Codes"): 404 10004
 *   Unknown Guild; 403 50001 Missing Access (the bot is not in the guild); 404 10007 Unknown Member;
 *   404 10011 Unknown Role; 404 10013 Unknown User (an account removed with `deleteUser`: the fake
 *   takes every other snowflake for an existing account); 403 50013 Missing Permissions when the
 *   bot lacks MANAGE_ROLES / KICK_MEMBERS (ADMINISTRATOR implies both; the owner has all) or breaks
 *   the role hierarchy (docs: Permissions, "Permission Hierarchy": a bot grants only roles lower than
 *   its highest role and kicks only members whose highest role is lower; nobody kicks the owner);
 *   400 50035 Invalid Form Body for a malformed snowflake or `limit` (docs: Reference, "Error
 *   Messages"). When several apply: guild, member, role, then permissions.
 * - Rate limits (docs: Rate Limits): a bucket per bot, bucket and top-level resource (guild id),
 *   fixed windows opened by their first request; every answer on a limited route carries
 *   `X-RateLimit-Limit`, `-Remaining`, `-Reset` (epoch seconds, fractional), `-Reset-After`
 *   (seconds, fractional) and `-Bucket`; over the limit: 429 `{message, retry_after, global: false}`
 *   with `Retry-After` (seconds, rounded up, as in the docs' examples) and `X-RateLimit-Scope: user`.
 *   Default buckets, as observed (the docs publish none): `PUT` and `DELETE` member role share one
 *   bucket of 10 per 10 s per guild (hata's rate-limit table "GROUP_USER_ROLE_MODIFY"; a 2020
 *   measurement table; limit 10 and a fixed window in discord-api-docs#7680, 2025); get member and
 *   kick 5 per 1 s; list members 10 per 10 s (both tables); `/users/@me`, get guild and get roles
 *   report no route limit (global only). All configurable (`buckets`).
 * - Global limit: `globalPerSecond` (default 50, docs: "Global Rate Limit") per bot, a fixed 1 s
 *   window from its first request, counted before the route's bucket; over it: 429 with
 *   `X-RateLimit-Global: true`, `X-RateLimit-Scope: global`, body `global: true`.
 * - Invalid request limit (docs: "Invalid Request Limit aka Cloudflare bans"): 401, 403 and 429
 *   (except scope `shared`) count; 10,000 within 10 minutes ban the caller. Discord counts per IP;
 *   the fake counts per bot (per IP without a valid token), so tests running many bots from one
 *   address stay independent. The ban answers every request 429 `{code: 0, message: "You are being
 *   blocked from accessing our API temporarily…"}` with `Retry-After` and no `X-RateLimit-*`
 *   headers, for one hour by default (reports: discord-api-docs#5385, #5682; CSSS/wall_e#2319).
 * - The gateway (`GET /gateway/bot` and the bots' WebSocket connections): see fake-discord-gateway.ts.
 * - Applications, application commands and interactions: see fake-discord-interactions.ts
 *   (`GET /applications/@me`, the guild commands' bulk overwrite, the follow-up webhook's edit of
 *   the original answer, interactions signed with the test's own Ed25519 key).
 * - Test hooks: `failNext(n, status)` answers the next n requests with that 5xx; `latencyMs`;
 *   `calls`; `stats()`; `close()` ends keep-alive sockets too.
 */

export { fakeSnowflake, type FakeBotInput, type FakeGuildInput, type FakeRoleInput } from './fake-discord-model.js';
export type { BucketName } from './fake-discord-routes.js';
export type { BucketLimit, InvalidRequestLimit } from './fake-discord-limits.js';
export type { FakeCommand, FakeDmMessage, FakeOriginalEdit, SignedInteraction } from './fake-discord-interactions.js';
export type { FakeGateway, GatewayLogEntry } from './fake-discord-gateway.js';

/** Observed limits (see above); `null` = no per-route limit, the global limit only. */
export const DEFAULT_BUCKETS: Readonly<Record<BucketName, BucketLimit | null>> = {
  currentUser: null,
  currentApplication: null,
  guildCommands: null,
  getGuild: null,
  listRoles: null,
  getMember: { limit: 5, windowMs: 1_000 },
  listMembers: { limit: 10, windowMs: 10_000 },
  memberRoles: { limit: 10, windowMs: 10_000 },
  removeMember: { limit: 5, windowMs: 1_000 },
  createDm: null,
  createMessage: { limit: 5, windowMs: 5_000 },
  gatewayBot: null,
};

export interface FakeDiscordOptions {
  /** Requests per second per bot (default 50, Discord's published global limit). */
  globalPerSecond?: number;
  /** Per-route limits, merged over DEFAULT_BUCKETS. */
  buckets?: Partial<Record<BucketName, BucketLimit | null>>;
  /** Delay before each answer, in ms (default 0). */
  latencyMs?: number;
  /** Default: 10,000 per 10 minutes, then a one-hour ban. */
  invalidRequests?: Partial<InvalidRequestLimit>;
  gateway?: FakeGatewayOptions;
}

export interface FakeCall {
  method: string;
  /** The route as the docs write it (`/guilds/{guild.id}/members/{user.id}`), or null if none. */
  route: string | null;
  /** The path as received, query included. */
  path: string;
  status: number;
  /** The bot whose token was sent, or null. */
  botId: string | null;
  /** Arrival, epoch ms. */
  at: number;
  /** On a 429 from the API: which limit answered. */
  scope?: 'user' | 'global';
  /** Answered by the temporary ban (429). */
  blocked?: true;
  /** `X-Audit-Log-Reason`, decoded. */
  reason?: string;
}

export interface FakeDiscordStats {
  total: number;
  byStatus: Record<number, number>;
  /** 429s from route buckets and the global limit (the ban's are `blockedByBan`). */
  rateLimited: number;
  globalRateLimited: number;
  /** 401, 403 and 429 answers: what Discord counts towards the ban. */
  invalidRequests: number;
  blockedByBan: number;
  /** Bots (or `ip:<address>`) banned right now. */
  banned: string[];
}

export interface FakeDiscord {
  /** `http://127.0.0.1:<port>/api`: REST's `api` option, TENURE_DISCORD_API_URL. */
  url: string;
  /** Every request, in the order answered (`at` is the arrival). Emptying it resets `stats()`. */
  calls: FakeCall[];
  addBot(bot: FakeBotInput): void;
  /** The portal's Reset Token: the old token answers 401 from now on. */
  resetToken(botId: string, newToken: string): void;
  setGuildMembersIntent(botId: string, enabled: boolean): void;
  addGuild(guild: FakeGuildInput): void;
  removeGuild(guildId: string): void;
  addBotToGuild(guildId: string, botId: string): void;
  removeBotFromGuild(guildId: string, botId: string): void;
  addRole(guildId: string, role: FakeRoleInput): void;
  /** The role is deleted (and leaves every member). */
  removeRole(guildId: string, roleId: string): void;
  /** The user joins (throws if already in: `setMemberRoles` edits roles). */
  addMember(guildId: string, userId: string, roleIds?: string[]): void;
  /** The user leaves; a later `addMember` is a rejoin, without the old roles. */
  removeMember(guildId: string, userId: string): void;
  /** A moderator's hand edit of a member's roles. */
  setMemberRoles(guildId: string, userId: string, roleIds: string[]): void;
  /** The member's roles (`@everyone` left out), or null when they are not in the guild. */
  memberRoles(guildId: string, userId: string): string[] | null;
  /** The account is deleted: it leaves every guild, and calls about it answer 10013 Unknown User. */
  deleteUser(userId: string): void;
  /** Moves the bot's managed role (default: above every other role). */
  setBotRolePosition(guildId: string, botId: string, position: number): void;
  /** Grants or takes MANAGE_ROLES / KICK_MEMBERS on the bot's managed role (both granted at first). */
  setBotPermissions(guildId: string, botId: string, permissions: { manageRoles?: boolean; kickMembers?: boolean }): void;
  /** The next `n` requests answer `status` (5xx, default 500), after authentication and rate limits. */
  failNext(n: number, status?: number): void;
  /** The application's (the bot's) public key, hex, as `GET /applications/@me` answers it. */
  verifyKey(botId: string): string;
  /** An interaction signed by Discord for `botId`'s application, ready to POST. */
  signInteraction(botId: string, fields: Record<string, unknown>, timestampSeconds?: number): SignedInteraction;
  /** The commands of `botId`'s application registered in `guildId` (empty when none). */
  guildCommands(botId: string, guildId: string): FakeCommand[];
  /** Every edit of an original interaction answer, oldest first. */
  originalEdits: FakeOriginalEdit[];
  /** The user closes (or opens again) their DMs to the bot: messages then answer 403 50007. */
  setDmsClosed(botId: string, userId: string, closed: boolean): void;
  /** The messages the bot sent the user in DMs, oldest first. */
  dms(botId: string, userId: string): string[];
  /** The same messages with their link buttons (one list per action row). */
  dmMessages(botId: string, userId: string): FakeDmMessage[];
  setLatency(ms: number): void;
  /** The gateway (fake-discord-gateway.ts): bots' WebSocket connections, their identifies, test hooks. */
  gateway: FakeGateway;
  /** Totals over `calls`, for one bot or all. */
  stats(botId?: string): FakeDiscordStats;
  /** Stops the server and ends every socket, keep-alive ones included. */
  close(): Promise<void>;
  /** OAuth2: the authorize page, the token endpoint, users/@me by Bearer, Add Guild Member (fake-discord-oauth.ts). */
  oauth: FakeOAuth;
}

export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const buckets: Record<BucketName, BucketLimit | null> = { ...DEFAULT_BUCKETS, ...options.buckets };
  const limits = new RateLimits(options.globalPerSecond ?? 50, {
    max: options.invalidRequests?.max ?? 10_000,
    windowMs: options.invalidRequests?.windowMs ?? 600_000,
    banMs: options.invalidRequests?.banMs ?? 3_600_000,
  });
  const world = new DiscordWorld();
  const desk = new InteractionsDesk(world);
  const oauth = new OAuthDesk(world);
  const gateway = new FakeGateway(world, options.gateway);
  const routes = discordRoutes(world, desk, gateway);
  let latencyMs = options.latencyMs ?? 0;
  const failures: number[] = [];
  const calls: FakeCall[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, call: FakeCall, answer: Answer) => {
    call.status = answer.status;
    calls.push(call);
    const payload = answer.body === undefined ? '' : JSON.stringify(answer.body);
    const headers: Record<string, string> = { ...answer.headers, 'Content-Length': String(Buffer.byteLength(payload)) };
    if (payload) headers['Content-Type'] = 'application/json';
    const write = () => {
      if (!res.destroyed) res.writeHead(answer.status, headers).end(payload);
    };
    if (latencyMs <= 0) return write();
    const timer = setTimeout(() => {
      timers.delete(timer);
      write();
    }, latencyMs);
    timers.add(timer);
  };

  /** In Discord's order: the ban (Cloudflare, in front), authentication, the global limit, the route, its bucket. */
  const answer = (method: string, url: URL, bot: Bot | undefined, key: string, call: FakeCall, at: number, body: unknown): Answer => {
    const versioned = /^\/api\/v(\d+)(\/.*)$/.exec(url.pathname);
    if (!versioned) return fail(404, 0, '404: Not Found');
    if (versioned[1] !== '9' && versioned[1] !== '10') return fail(400, 50041, 'Invalid API version');
    const path = versioned[2]!;
    // The follow-up webhook: the interaction's token in the path is its authentication.
    const followUp = /^\/webhooks\/(\d{1,20})\/([^/]+)\/messages\/(?:@|%40)original$/.exec(path);
    if (followUp) {
      call.route = '/webhooks/{application.id}/{interaction.token}/messages/@original';
      if (method !== 'PATCH') return fail(405, 0, '405: Method Not Allowed');
      return desk.editOriginal(followUp[1]!, decode(followUp[2]!), body, at);
    }
    const matches = routes.filter((r) => r.pattern.test(path));
    const matched = matches.find((r) => r.method === method);
    call.route = (matched ?? matches[0])?.template ?? null;

    if (!bot) return fail(401, 0, '401: Unauthorized');
    const global = limits.global(key, at);
    if (!global.ok) {
      call.scope = 'global';
      return { status: 429, ...rateLimited('global', global.retryAfterMs) };
    }
    if (!matched) return matches.length ? fail(405, 0, '405: Method Not Allowed') : fail(404, 0, '404: Not Found');

    const values = matched.pattern.exec(path)!.slice(1);
    const params: Record<string, string> = {};
    for (const [i, name] of matched.params.entries()) {
      if (!SNOWFLAKE.test(values[i]!)) return invalidField(name, 'NUMBER_TYPE_COERCE', `Value "${values[i]}" is not snowflake.`);
      params[name] = values[i]!;
    }
    let routeHeaders: Record<string, string> = {};
    const limit = buckets[matched.bucket];
    if (limit) {
      const verdict = limits.route(key, matched.bucket, limit, params.guild_id ?? 'global', at);
      if (!verdict.ok) {
        call.scope = 'user';
        return { status: 429, ...rateLimited('user', verdict.retryAfterMs, verdict.headers) };
      }
      routeHeaders = verdict.headers;
    }
    const failure = failures.shift();
    if (failure !== undefined) return fail(failure, 0, `${failure}: ${STATUS_CODES[failure] ?? 'Server Error'}`);
    const handled = matched.handle(bot, params, url.searchParams, body);
    return { ...handled, headers: { ...routeHeaders, ...handled.headers } };
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const at = Date.now();
    const method = req.method ?? 'GET';
    const authorization = req.headers.authorization ?? '';
    const bot = authorization.startsWith('Bot ') ? world.botsByToken.get(authorization.slice(4)) : undefined;
    // Discord counts per IP; the fake per bot, so that tests running many bots stay independent.
    const key = bot?.id ?? `ip:${req.socket.remoteAddress ?? ''}`;
    const call: FakeCall = { method, route: null, path: req.url ?? '/', status: 0, botId: bot?.id ?? null, at };
    const reason = req.headers['x-audit-log-reason'];
    if (typeof reason === 'string') call.reason = decode(reason);

    const viaOAuth = oauth.answer(method, new URL(req.url ?? '/', 'http://fake-discord'), req.headers, raw);
    if (viaOAuth) return send(res, { ...call, route: 'oauth2' }, viaOAuth);
    const banLeft = limits.bannedFor(key, at);
    if (banLeft > 0) {
      call.blocked = true;
      return send(res, call, { status: 429, ...banned(banLeft) });
    }
    const answered = answer(method, new URL(req.url ?? '/', 'http://fake-discord'), bot, key, call, at, parseJson(raw));
    if (answered.status === 401 || answered.status === 403 || answered.status === 429) limits.countInvalid(key, at);
    send(res, call, answered);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  gateway.attach(server, port);

  return {
    url: `http://127.0.0.1:${port}/api`,
    calls,
    oauth,
    addBot: (bot) => world.addBot(bot),
    resetToken: (botId, newToken) => world.resetToken(botId, newToken),
    setGuildMembersIntent(botId, enabled) {
      world.bot(botId).guildMembersIntent = enabled;
    },
    addGuild: (guild) => world.addGuild(guild),
    removeGuild(guildId) {
      world.guilds.delete(world.guild(guildId).id);
    },
    addBotToGuild: (guildId, botId) => world.join(world.guild(guildId), world.bot(botId)),
    removeBotFromGuild: (guildId, botId) => world.leave(world.guild(guildId), world.bot(botId).id),
    addRole: (guildId, role) => world.addRole(guildId, role),
    removeRole: (guildId, roleId) => world.removeRole(guildId, roleId),
    addMember: (guildId, userId, roleIds = []) => world.addMember(guildId, userId, roleIds),
    removeMember: (guildId, userId) => world.leave(world.guild(guildId), userId),
    setMemberRoles: (guildId, userId, roleIds) => world.setMemberRoles(guildId, userId, roleIds),
    memberRoles(guildId, userId) {
      const member = world.guild(guildId).members.get(userId);
      return member ? [...member.roles] : null;
    },
    deleteUser: (userId) => world.deleteUser(userId),
    setBotRolePosition(guildId, botId, position) {
      world.botRole(guildId, botId).position = position;
    },
    setBotPermissions(guildId, botId, permissions) {
      const role = world.botRole(guildId, botId);
      for (const [bit, on] of [
        [MANAGE_ROLES, permissions.manageRoles],
        [KICK_MEMBERS, permissions.kickMembers],
      ] as const) {
        if (on !== undefined) role.permissions = on ? role.permissions | bit : role.permissions & ~bit;
      }
    },
    failNext(n, status = 500) {
      if (status < 500 || status > 599) throw new Error('fake discord: failNext takes a 5xx status');
      for (let i = 0; i < n; i++) failures.push(status);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    verifyKey: (botId) => desk.verifyKey(world.bot(botId).id),
    signInteraction: (botId, fields, timestampSeconds) => desk.sign(world.bot(botId).id, fields, timestampSeconds),
    guildCommands: (botId, guildId) => desk.commands.get(`${botId}:${guildId}`) ?? [],
    originalEdits: desk.edits,
    gateway,
    setDmsClosed(botId, userId, closed) {
      if (closed) desk.closedDms.add(`${botId}:${userId}`);
      else desk.closedDms.delete(`${botId}:${userId}`);
    },
    dms: (botId, userId) => desk.dms.get(`${botId}:${userId}`) ?? [],
    dmMessages: (botId, userId) => desk.dmMessages.get(`${botId}:${userId}`) ?? [],
    stats(botId) {
      const list = botId === undefined ? calls : calls.filter((c) => c.botId === botId);
      const byStatus: Record<number, number> = {};
      for (const c of list) byStatus[c.status] = (byStatus[c.status] ?? 0) + 1;
      const limited = list.filter((c) => c.status === 429 && !c.blocked);
      return {
        total: list.length,
        byStatus,
        rateLimited: limited.length,
        globalRateLimited: limited.filter((c) => c.scope === 'global').length,
        invalidRequests: list.filter((c) => !c.blocked && (c.status === 401 || c.status === 403 || c.status === 429)).length,
        blockedByBan: list.filter((c) => c.blocked).length,
        banned: limits.bannedKeys(Date.now()).filter((key) => botId === undefined || key === botId),
      };
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      gateway.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function parseJson(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
