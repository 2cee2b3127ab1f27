import { createHmac } from 'node:crypto';
import type { DashboardSessionsStore } from '../../store/dashboard-sessions.store.js';
import type { Clock } from '../clock.js';
import { digestOf, isLinkToken, newLinkToken } from '../front-desk/link-tokens.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import type { DiscordLoginStatements, DiscordOAuth } from '../web/discord-login.service.js';
import type { TelegramLoginChecker, TelegramLoginStatements } from '../web/telegram-login.service.js';
import type { DashboardSessions } from './sessions.service.js';
import { sameText } from '../same-text.js';

/**
 * An admin's sign-in to the dashboard with Discord or Telegram (docs/dashboard.md, "Signing in"),
 * built from the pieces of the members' logins (docs/web.md): Discord's authorization code flow
 * with PKCE and a single-use state bound to the browser by a cookie, scope `identify` only, through
 * the project's Discord application; Telegram's Login Widget answer checked with the project's bot
 * token, spent once, accepted only in a browser holding the intent the sign-in page left there.
 * Either way the account must be an admin of the project now; then a session starts.
 */

export const DASHBOARD_LOGIN_TTL_MS = 10 * 60_000;
const SCOPE = 'identify';

/** The dashboard's own statements: Discord sign-ins under way, and whether a user is an admin. */
export type DashboardSignInStatements = Pick<DashboardSessionsStore, 'saveLogin' | 'takeLogin' | 'projectActor'>;
/** The members' login statements reused: the project's Discord application, its Telegram bot, spent widget answers. */
export type AccountStatements = Pick<DiscordLoginStatements, 'portalLoginTarget'> & TelegramLoginStatements;

export type SignInStart = { kind: 'redirect'; url: string; state: string } | { kind: 'unknown' } | { kind: 'not-configured' };

export type SignedIn =
  | { kind: 'session'; projectId: string; token: string; sessionId: string; userId: string }
  /** Who they are is known, but they are not an admin of the project. */
  | { kind: 'not-admin'; projectId: string; userId: string }
  | { kind: 'refused'; projectId: string | null; reason: 'forged' | 'used' | 'expired' | 'denied' | 'refused' | 'unavailable' | 'malformed' | 'bad-hash' | 'stale' | 'replayed' | 'not-configured' | 'unknown' };

export class DashboardSignIn {
  constructor(
    private readonly store: DashboardSignInStatements,
    private readonly accounts: AccountStatements,
    private readonly sessions: Pick<DashboardSessions, 'start'>,
    private readonly oauth: DiscordOAuth,
    private readonly checkTelegram: TelegramLoginChecker,
    private readonly box: SecretBox | null,
    private readonly clock: Clock,
    private readonly options: { publicUrl: string },
  ) {}

  /** Where Discord sends the browser back: one address for every project (register it in the Discord application). */
  get discordRedirectUri(): string {
    return `${this.options.publicUrl}/dashboard/discord/callback`;
  }

  /** The widget's `data-auth-url` for the project. */
  telegramAuthUrl(projectId: string): string {
    return `${this.options.publicUrl}/dashboard/${encodeURIComponent(projectId)}/telegram/callback`;
  }

  /** What the project's sign-in page can offer: Discord (an application with a secret), Telegram (a bot, its username). */
  async methods(projectId: string): Promise<{ discord: boolean; telegramBot: string | null } | null> {
    const [discord, telegram] = await Promise.all([this.accounts.portalLoginTarget(projectId), this.accounts.telegramLoginTarget(projectId, null)]);
    if (!discord.projectExists || !telegram) return null;
    const openable = (sealed: string | undefined) => this.box !== null && sealed !== undefined && openOrNull(this.box, sealed) !== null;
    return { discord: openable(discord.application?.clientSecretSealed), telegramBot: telegram.bot?.username && openable(telegram.bot.tokenSealed) ? telegram.bot.username : null };
  }

  async startDiscord(projectId: string): Promise<SignInStart> {
    const target = await this.accounts.portalLoginTarget(projectId);
    if (!target.projectExists) return { kind: 'unknown' };
    const app = target.application;
    if (!app || !this.box || openOrNull(this.box, app.clientSecretSealed) === null) return { kind: 'not-configured' };
    const state = newLinkToken();
    const { verifier, challenge } = await this.oauth.pkce();
    const now = this.clock.now();
    await this.store.saveLogin({ stateHash: digestOf(state), projectId, codeVerifierSealed: this.box.seal(verifier), now, expiresAt: new Date(now.getTime() + DASHBOARD_LOGIN_TTL_MS) });
    const url = this.oauth.authorizeUrl({ clientId: app.applicationId, redirectUri: this.discordRedirectUri, state, codeChallenge: challenge, scope: SCOPE });
    return { kind: 'redirect', url, state };
  }

  /** Discord's redirect back: `callback` its query, `cookieState` the state this browser started with. */
  async finishDiscord(callback: URLSearchParams, cookieState: string | undefined, userAgent: string | undefined): Promise<SignedIn> {
    const state = callback.get('state') ?? '';
    if (!isLinkToken(state) || cookieState === undefined || !sameText(state, cookieState)) return { kind: 'refused', projectId: null, reason: 'forged' };
    const login = await this.store.takeLogin(digestOf(state));
    if (!login) return { kind: 'refused', projectId: null, reason: 'used' };
    const { projectId } = login;
    if (login.expiresAt.getTime() <= this.clock.now().getTime()) return { kind: 'refused', projectId, reason: 'expired' };
    if (callback.get('error') === 'access_denied') return { kind: 'refused', projectId, reason: 'denied' };
    const app = (await this.accounts.portalLoginTarget(projectId)).application;
    const secret = this.box && app ? openOrNull(this.box, app.clientSecretSealed) : null;
    const verifier = this.box ? openOrNull(this.box, login.codeVerifierSealed) : null;
    if (!app || secret === null || verifier === null) return { kind: 'refused', projectId, reason: 'not-configured' };
    const answer = await this.oauth.exchange({ clientId: app.applicationId, clientSecret: secret, redirectUri: this.discordRedirectUri, callback, state, codeVerifier: verifier });
    if (answer.kind !== 'ok') return { kind: 'refused', projectId, reason: answer.kind };
    return this.admit(projectId, answer.userId, 'discord', userAgent);
  }

  /** The intent the sign-in page leaves in the browser for the widget: `projectId.expiry.mac`; null without the instance key. */
  telegramIntent(projectId: string): string | null {
    if (!this.box) return null;
    const body = `${projectId}.${Math.floor((this.clock.now().getTime() + DASHBOARD_LOGIN_TTL_MS) / 1000)}`;
    return `${body}.${macOf(this.box, body)}`;
  }

  /** The widget's redirect back with Telegram's signed fields; refusals come before anything is written. */
  async finishTelegram(projectId: string, query: URLSearchParams, intentCookie: string | undefined, userAgent: string | undefined): Promise<SignedIn> {
    const target = await this.accounts.telegramLoginTarget(projectId, null);
    if (!target) return { kind: 'refused', projectId: null, reason: 'unknown' };
    const token = target.bot && this.box ? openOrNull(this.box, target.bot.tokenSealed) : null;
    if (token === null || !this.box) return { kind: 'refused', projectId, reason: 'not-configured' };
    if (!this.intended(this.box, intentCookie, projectId)) return { kind: 'refused', projectId, reason: 'forged' };
    const now = this.clock.now();
    const checked = this.checkTelegram(query, token, now);
    if (checked.kind !== 'ok') return { kind: 'refused', projectId, reason: checked.kind };
    if (!(await this.accounts.spendTelegramLogin({ hashDigest: digestOf(checked.hash), projectId, usedAt: now, expiresAt: checked.validUntil }))) return { kind: 'refused', projectId, reason: 'replayed' };
    return this.admit(projectId, checked.user.id, 'telegram', userAgent);
  }

  private async admit(projectId: string, userId: string, method: 'discord' | 'telegram', userAgent: string | undefined): Promise<SignedIn> {
    const actor = await this.store.projectActor(projectId, userId);
    if (!actor || actor.permissions === null) return { kind: 'not-admin', projectId, userId };
    const { token, sessionId } = await this.sessions.start(projectId, userId, method, userAgent);
    return { kind: 'session', projectId, token, sessionId, userId };
  }

  private intended(box: SecretBox, cookie: string | undefined, projectId: string): boolean {
    const parts = cookie?.split('.') ?? [];
    if (parts.length !== 3) return false;
    const [id, expiry, mac] = parts as [string, string, string];
    if (!/^[0-9]{1,12}$/.test(expiry) || !sameText(mac, macOf(box, `${id}.${expiry}`))) return false;
    return id === projectId && Number(expiry) * 1000 > this.clock.now().getTime();
  }
}

function macOf(box: SecretBox, body: string): string {
  return createHmac('sha256', box.derive('dashboard telegram intent')).update(body).digest('hex');
}
