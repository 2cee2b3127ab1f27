import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { fakeSnowflake, type DiscordWorld } from './fake-discord-model.js';
import type { Answer } from './fake-discord-routes.js';

/**
 * The fake Discord's OAuth2 side, from Discord's documentation (Topics → OAuth2, "Authorization
 * Code Grant"; Resources → Guild, "Add Guild Member"; Opcodes and Status Codes, "JSON Error
 * Codes"), not from what tenure sends:
 * - `GET /oauth2/authorize` (at the origin, as `https://discord.com/oauth2/authorize`):
 *   `response_type=code`, `client_id` (an application: its id is its bot's user id),
 *   `redirect_uri` (one the application registered, exactly), `scope`, `state`, and PKCE's
 *   `code_challenge` with `code_challenge_method=S256`. Discord shows a consent page; the fake is
 *   the user pressing a button at once: a 302 to `redirect_uri?code=…&state=…` for the test's next
 *   user (`nextLogin`), or, when the test says the user cancels, `?error=access_denied&
 *   error_description=…&state=…`. A bad client or redirect URI answers 400 without redirecting.
 * - `POST /api/oauth2/token` (also under `/api/v{9,10}`), form-encoded: the client authenticated by
 *   HTTP Basic or `client_id` + `client_secret` in the body (else 401 `{"error": "invalid_client"}`);
 *   `grant_type=authorization_code` with `code`, the same `redirect_uri`, and `code_verifier` whose
 *   S256 is the challenge. A code works once and for 10 minutes; anything wrong is 400
 *   `{"error": "invalid_grant"}`. The answer: `{access_token, token_type: "Bearer", expires_in:
 *   604800, refresh_token, scope}`. `grant_type=refresh_token` with a `refresh_token` the client was
 *   given answers the same with new tokens (the old refresh token then works no more); another is
 *   `invalid_grant`.
 * - `GET /api/v10/users/@me` with `Authorization: Bearer <access token>`: the user object; a bad
 *   token 401 `{"message": "401: Unauthorized", "code": 0}`.
 * - `PUT /api/v10/guilds/{guild.id}/members/{user.id}` `{access_token}` with the Bot token of the
 *   application the token was issued to: 201 with the member (the user joins), 204 when already a
 *   member. The bot must be in the guild (403 50001) with CREATE_INSTANT_INVITE (403 50013 Missing
 *   Permissions; the fake's bots join without it: `allowInvites`); the token must be the user's,
 *   with `guilds.join` (403 50025 Invalid OAuth2 access token); a user banned from the guild is
 *   403 40007, a user in too many guilds 400 30001 (`bannedFrom`, `tooManyGuilds`).
 */

export const CREATE_INSTANT_INVITE = 1n << 0n;
const CODE_TTL_MS = 10 * 60_000;

interface Application {
  secret: string;
  redirectUris: Set<string>;
}

interface Code {
  clientId: string;
  userId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  expiresAt: number;
}

interface Token {
  clientId: string;
  userId: string;
  scope: string;
}

export interface FakeOAuth {
  /** The application of bot `clientId` takes logins with `secret`, back to `redirectUris`. */
  registerApplication(clientId: string, secret: string, redirectUris: string[]): void;
  /** Who logs in next: a user id (default a new one each time), or `deny` (they press Cancel). */
  nextLogin: { userId?: string; deny?: boolean };
  /** Every code exchange refused with `invalid_grant` until set back (a code Discord no longer knows). */
  refuseExchanges: boolean;
  /** The guild's bans, and users in Discord's maximum of guilds. */
  bannedFrom(guildId: string, userId: string): void;
  tooManyGuilds(userId: string): void;
  /** Grants (or takes) CREATE_INSTANT_INVITE on the bot's managed role in the guild. */
  allowInvites(guildId: string, botId: string, on?: boolean): void;
  /** The users who logged in, in order, and the guild joins Discord made (`guild:user`). */
  logins: string[];
  /** The users whose tokens were renewed with a refresh token, in order. */
  refreshes: string[];
  joins: string[];
}

export class OAuthDesk implements FakeOAuth {
  nextLogin: { userId?: string; deny?: boolean } = {};
  refuseExchanges = false;
  readonly logins: string[] = [];
  readonly refreshes: string[] = [];
  private readonly refreshTokens = new Map<string, Token>();
  readonly joins: string[] = [];
  private readonly applications = new Map<string, Application>();
  private readonly codes = new Map<string, Code>();
  private readonly tokens = new Map<string, Token>();
  private readonly bans = new Set<string>();
  private readonly full = new Set<string>();

  constructor(private readonly world: DiscordWorld) {}

  registerApplication(clientId: string, secret: string, redirectUris: string[]): void {
    this.applications.set(clientId, { secret, redirectUris: new Set(redirectUris) });
  }

  bannedFrom(guildId: string, userId: string): void {
    this.bans.add(`${guildId}:${userId}`);
  }

  tooManyGuilds(userId: string): void {
    this.full.add(userId);
  }

  allowInvites(guildId: string, botId: string, on = true): void {
    const role = this.world.botRole(guildId, botId);
    role.permissions = on ? role.permissions | CREATE_INSTANT_INVITE : role.permissions & ~CREATE_INSTANT_INVITE;
  }

  /** The answer for a request the OAuth2 side serves, or null to leave it to the rest of the fake. */
  answer(method: string, url: URL, headers: IncomingHttpHeaders, raw: string): (Answer & { location?: string }) | null {
    if (url.pathname === '/oauth2/authorize' && method === 'GET') return this.authorize(url.searchParams);
    if (/^\/api(\/v(9|10))?\/oauth2\/token$/.test(url.pathname) && method === 'POST') return this.token(headers, new URLSearchParams(raw));
    const auth = headers.authorization ?? '';
    if (/^\/api\/v(9|10)\/users\/@me$/.test(url.pathname) && auth.startsWith('Bearer ')) {
      const token = this.tokens.get(auth.slice(7));
      return token ? { status: 200, body: this.world.userJson(token.userId) } : { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    }
    const join = /^\/api\/v(?:9|10)\/guilds\/(\d+)\/members\/(\d+)$/.exec(url.pathname);
    if (join && method === 'PUT') return this.addMember(join[1]!, join[2]!, auth, raw);
    return null;
  }

  private authorize(q: URLSearchParams): Answer & { location?: string } {
    const app = this.applications.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!app) return { status: 400, body: { client_id: ['Value "' + (q.get('client_id') ?? '') + '" is not snowflake.'] } };
    if (!app.redirectUris.has(redirectUri)) return { status: 400, body: { redirect_uri: ['Not a well formed URL.'] } };
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
      back.searchParams.set('error', 'invalid_request');
    } else if (this.nextLogin.deny) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The resource owner or authorization server denied the request');
    } else {
      const userId = this.nextLogin.userId ?? fakeSnowflake();
      this.logins.push(userId);
      const code = randomBytes(15).toString('base64url');
      this.codes.set(code, { clientId: q.get('client_id')!, userId, redirectUri, challenge: q.get('code_challenge')!, scope: q.get('scope') ?? '', expiresAt: Date.now() + CODE_TTL_MS });
      back.searchParams.set('code', code);
    }
    if (state !== null) back.searchParams.set('state', state);
    return { status: 302, headers: { Location: back.href } };
  }

  private token(headers: IncomingHttpHeaders, body: URLSearchParams): Answer {
    let clientId = body.get('client_id');
    let secret = body.get('client_secret');
    const basic = /^Basic (.+)$/.exec(headers.authorization ?? '');
    if (basic) {
      const [id, pass] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((s) => decodeURIComponent(s.replace(/\+/g, ' ')));
      clientId = id ?? null;
      secret = pass ?? null;
    }
    const app = clientId === null ? undefined : this.applications.get(clientId);
    if (!app || app.secret !== secret) return { status: 401, body: { error: 'invalid_client' } };
    if (body.get('grant_type') === 'refresh_token') {
      const held = this.refreshTokens.get(body.get('refresh_token') ?? '');
      if (!held || held.clientId !== clientId) return { status: 400, body: { error: 'invalid_grant' } };
      this.refreshTokens.delete(body.get('refresh_token')!);
      this.refreshes.push(held.userId);
      return { status: 200, body: this.issue(held) };
    }
    if (body.get('grant_type') !== 'authorization_code') return { status: 400, body: { error: 'unsupported_grant_type' } };
    const code = this.codes.get(body.get('code') ?? '');
    this.codes.delete(body.get('code') ?? '');
    const verifier = body.get('code_verifier') ?? '';
    const s256 = createHash('sha256').update(verifier).digest('base64url');
    if (this.refuseExchanges || !code || code.clientId !== clientId || code.expiresAt <= Date.now() || code.redirectUri !== body.get('redirect_uri') || s256 !== code.challenge) {
      return { status: 400, body: { error: 'invalid_grant' } };
    }
    return { status: 200, body: this.issue({ clientId: code.clientId, userId: code.userId, scope: code.scope }) };
  }

  private issue(t: Token) {
    const accessToken = randomBytes(20).toString('base64url');
    const refreshToken = randomBytes(20).toString('base64url');
    this.tokens.set(accessToken, t);
    this.refreshTokens.set(refreshToken, t);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 604_800, refresh_token: refreshToken, scope: t.scope };
  }

  private addMember(guildId: string, userId: string, auth: string, raw: string): Answer {
    const bot = auth.startsWith('Bot ') ? this.world.botsByToken.get(auth.slice(4)) : undefined;
    if (!bot) return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    const guild = this.world.guilds.get(guildId);
    if (!guild) return { status: 404, body: { message: 'Unknown Guild', code: 10004 } };
    if (!guild.members.has(bot.id)) return { status: 403, body: { message: 'Missing Access', code: 50001 } };
    if (!this.world.can(guild, bot.id, CREATE_INSTANT_INVITE)) return { status: 403, body: { message: 'Missing Permissions', code: 50013 } };
    let accessToken: unknown;
    try {
      accessToken = (JSON.parse(raw) as { access_token?: unknown }).access_token;
    } catch {
      accessToken = undefined;
    }
    const token = typeof accessToken === 'string' ? this.tokens.get(accessToken) : undefined;
    if (!token || token.userId !== userId || token.clientId !== bot.id || !token.scope.split(' ').includes('guilds.join')) {
      return { status: 403, body: { message: 'Invalid OAuth2 access token', code: 50025 } };
    }
    if (this.bans.has(`${guildId}:${userId}`)) return { status: 403, body: { message: 'The user is banned from this guild.', code: 40007 } };
    if (guild.members.has(userId)) return { status: 204 };
    if (this.full.has(userId)) return { status: 400, body: { message: 'Maximum number of guilds reached (100)', code: 30001 } };
    this.world.addMember(guildId, userId, []);
    this.joins.push(`${guildId}:${userId}`);
    return { status: 201, body: this.world.memberJson(userId, guild.members.get(userId)!) };
  }
}
