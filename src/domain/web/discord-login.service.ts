import type { Clock } from '../clock.js';
import type { Result } from '../errors.js';
import { digestOf, isLinkToken, newLinkToken } from '../front-desk/link-tokens.js';
import type { PayLinkInput, PayLinkView } from '../front-desk/pay-links.service.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import { blockedOf, type PlanReadinessStatements } from './plan-readiness.js';
import { sameText } from '../same-text.js';

/**
 * Login with Discord for a web buyer (docs/web.md, "Login with Discord"): the authorization code
 * flow with PKCE (S256) and a single-use `state` bound to the browser. `start` keeps a record of
 * the login (the state's digest, the sealed PKCE verifier, ten minutes) and the route sets the
 * state in an HTTP-only cookie; `finish` accepts Discord's answer only in the browser holding that
 * cookie, consumes the record once, exchanges the code, and makes the buyer's pay link for their
 * Discord id. The member's token is kept, sealed, so that the bot can add them to the guild once
 * they paid (src/domain/web/guild-joins.ts). The same flow signs a member in to the portal
 * (`startPortal`, scope `identify` only, no plan): `finish` then opens a portal link for their Discord
 * id, and keeps no token (an `identify` token cannot add anyone to a guild, and must not replace the
 * one that can). A member not in a server of theirs rejoins from the portal the same way
 * (`startRejoin`, `identify guilds.join`, bound to the member: only their own Discord account is
 * taken back), which queues a guild join with their token and ends on a new portal link of theirs.
 * The OAuth2 calls themselves are oauth4webapi's (src/web/discord-oauth.ts).
 */

/** Buying asks Discord for the member's id and for the right to add them to the server. */
export const BUY_SCOPES = 'identify guilds.join';
/** Signing in to the portal needs only to know who they are. */
export const PORTAL_SCOPES = 'identify';

/** How long a login may take between the Login button and Discord's redirect back. */
export const LOGIN_TTL_MS = 10 * 60_000;

/** The application a project's Discord logins go through, as the store reads it. */
export interface LoginApplication {
  applicationId: string;
  clientSecretSealed: string;
}

export interface LoginRecord {
  projectId: string;
  /** null: a sign-in to the portal, or a rejoin. */
  planId: string | null;
  /** A rejoin begun from a member's portal: the member (whose own Discord account must come back) and the guild. */
  rejoin: Rejoin | null;
  codeVerifierSealed: string;
  expiresAt: Date;
  application: LoginApplication | null;
}

/** Who a rejoin is for and where to: docs/portal.md, "Rejoining the Discord server". */
export interface Rejoin {
  userId: string;
  guildId: string;
}

export interface NewLogin {
  stateHash: string;
  projectId: string;
  planId: string | null;
  rejoin?: Rejoin | null;
  codeVerifierSealed: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface MemberToken {
  projectId: string;
  userId: string;
  accessTokenSealed: string;
  refreshTokenSealed: string | null;
  expiresAt: Date;
}

export interface DiscordLoginStatements extends PlanReadinessStatements {
  /** The project's Discord application with its sealed client secret, and whether `planId` is one of its plans granting a Discord target. */
  loginTarget(projectId: string, planId: string): Promise<{ application: LoginApplication | null; planGrantsDiscord: boolean }>;
  /** The project's Discord application, and whether the project exists. */
  portalLoginTarget(projectId: string): Promise<{ application: LoginApplication | null; projectExists: boolean }>;
  saveLogin(l: NewLogin): Promise<void>;
  /** Deletes the login and answers it (single use): null when there is none (never made, or already used). */
  takeLogin(stateHash: string): Promise<LoginRecord | null>;
  saveMemberToken(t: MemberToken): Promise<void>;
  /**
   * The guild of the member's Discord access row for `targetId` while it waits for them to join,
   * with the project's Discord application; null when there is no such row (another member's, in,
   * revoked, not Discord).
   */
  rejoinTarget(projectId: string, userId: string, targetId: string): Promise<{ application: LoginApplication | null; guildId: string } | null>;
  /** Keeps the member's token and queues their join to `guildId` (once per `dedupeKey`), in one statement. */
  saveRejoin(r: MemberToken & { guildId: string; dedupeKey: string; now: Date }): Promise<void>;
}

/** What Discord answered a code exchange (and `/users/@me` with the token). */
export type Exchanged =
  | { kind: 'ok'; userId: string; accessToken: string; refreshToken: string | null; expiresInSeconds: number }
  /** The buyer pressed Cancel on Discord's consent screen (`error=access_denied`). */
  | { kind: 'denied' }
  /** Discord refused the code or the client (`invalid_grant`, `invalid_client`…). */
  | { kind: 'refused'; error: string }
  | { kind: 'unavailable'; error: string };

/** What Discord answered a refresh: the member's new tokens, or why not. */
export type Refreshed =
  | { kind: 'ok'; accessToken: string; refreshToken: string | null; expiresInSeconds: number }
  | { kind: 'refused'; error: string }
  | { kind: 'unavailable'; error: string };

/** Discord's OAuth2 endpoints (src/web/discord-oauth.ts). */
export interface DiscordOAuth {
  pkce(): Promise<{ verifier: string; challenge: string }>;
  /** A new access token for the member from their refresh token (`grant_type=refresh_token`). */
  refresh(a: { clientId: string; clientSecret: string; refreshToken: string }): Promise<Refreshed>;
  authorizeUrl(a: { clientId: string; redirectUri: string; state: string; codeChallenge: string; scope: string }): string;
  exchange(a: { clientId: string; clientSecret: string; redirectUri: string; callback: URLSearchParams; state: string; codeVerifier: string }): Promise<Exchanged>;
}

export type StartOutcome =
  | { kind: 'redirect'; url: string; state: string }
  /** No such plan of the project, or it grants nothing on Discord. */
  | { kind: 'unknown' }
  /** The bot cannot give the plan's access now (src/domain/web/plan-readiness.ts): no login, no payment. */
  | { kind: 'cannot-be-bought' }
  /** The project has no Discord application with a client secret, or no key to open it. */
  | { kind: 'not-configured' };

/** What a login that sells nothing can answer: the portal's sign-in and rejoin. */
export type Begun = Exclude<StartOutcome, { kind: 'cannot-be-bought' }>;

export type FinishOutcome =
  | { kind: 'pay'; payLinkId: string; projectId: string }
  /** A portal sign-in: the member's portal link (its token), opened next by this browser. */
  | { kind: 'portal'; token: string; projectId: string }
  /** A portal sign-in by a Discord account the project has no membership for. */
  | { kind: 'no-member'; projectId: string }
  /** A rejoin: the join is queued; `token` is a new portal link of the member's, opened next by this browser. */
  | { kind: 'rejoin'; token: string; projectId: string }
  /** A rejoin answered by another Discord account than the member's: nothing kept, nothing queued. */
  | { kind: 'wrong-account'; projectId: string }
  /** The state is not the one this browser started with (forged, another browser, no cookie). */
  | { kind: 'forged' }
  /** No login under way for this state: already used, or never made. */
  | { kind: 'used' }
  | { kind: 'expired'; projectId: string }
  | { kind: 'denied'; projectId: string }
  | { kind: 'refused'; projectId: string; error: string }
  | { kind: 'unavailable'; projectId: string; error: string }
  /** Discord said who they are, but the pay link could not be made (banned, plan gone). */
  | { kind: 'no-pay-link'; projectId: string; message: string };

export interface PayLinkMaker {
  create(projectId: string, input: PayLinkInput): Promise<Result<PayLinkView>>;
}

/** The portal's side of a sign-in (PortalService.signIn). */
export interface PortalSignIn {
  signIn(projectId: string, userId: string): Promise<{ kind: 'link'; token: string } | { kind: 'no-member' }>;
}

export class DiscordLoginService {
  constructor(
    private readonly store: DiscordLoginStatements,
    private readonly oauth: DiscordOAuth,
    private readonly payLinks: PayLinkMaker,
    private readonly portal: PortalSignIn,
    private readonly box: SecretBox | null,
    private readonly clock: Clock,
    private readonly options: { redirectUri: string },
  ) {}

  async start(projectId: string, planId: string): Promise<StartOutcome> {
    const target = await this.store.loginTarget(projectId, planId);
    if (!target.planGrantsDiscord) return { kind: 'unknown' };
    const facts = await this.store.planAccessFacts(projectId, planId);
    if (facts && blockedOf(facts) !== null) return { kind: 'cannot-be-bought' };
    return this.begin(projectId, planId, target.application, BUY_SCOPES);
  }

  /** "Manage your membership": a login that ends on the member's portal page. */
  async startPortal(projectId: string): Promise<Begun> {
    const target = await this.store.portalLoginTarget(projectId);
    if (!target.projectExists) return { kind: 'unknown' };
    return this.begin(projectId, null, target.application, PORTAL_SCOPES);
  }

  /**
   * "Rejoin the Discord server" in the member's portal (docs/portal.md): a login asking for
   * `guilds.join`, bound to the member and the guild of their access row for `targetId`; Discord's
   * answer counts only for the member's own Discord account (`finish`).
   */
  async startRejoin(projectId: string, userId: string, targetId: string): Promise<Begun> {
    const target = await this.store.rejoinTarget(projectId, userId, targetId);
    if (!target) return { kind: 'unknown' };
    return this.begin(projectId, null, target.application, BUY_SCOPES, { userId, guildId: target.guildId });
  }

  private async begin(projectId: string, planId: string | null, app: LoginApplication | null, scope: string, rejoin: Rejoin | null = null): Promise<Begun> {
    if (!app || !this.box || openOrNull(this.box, app.clientSecretSealed) === null) return { kind: 'not-configured' };
    const state = newLinkToken();
    const { verifier, challenge } = await this.oauth.pkce();
    const now = this.clock.now();
    await this.store.saveLogin({
      stateHash: digestOf(state),
      projectId,
      planId,
      rejoin,
      codeVerifierSealed: this.box.seal(verifier),
      createdAt: now,
      expiresAt: new Date(now.getTime() + LOGIN_TTL_MS),
    });
    const url = this.oauth.authorizeUrl({ clientId: app.applicationId, redirectUri: this.options.redirectUri, state, codeChallenge: challenge, scope });
    return { kind: 'redirect', url, state };
  }

  /** Discord's redirect back: `callback` its query, `cookieState` the state this browser started with. */
  async finish(callback: URLSearchParams, cookieState: string | undefined): Promise<FinishOutcome> {
    const state = callback.get('state') ?? '';
    if (!isLinkToken(state) || cookieState === undefined || !sameText(state, cookieState)) return { kind: 'forged' };
    const login = await this.store.takeLogin(digestOf(state));
    if (!login) return { kind: 'used' };
    const { projectId } = login;
    if (login.expiresAt.getTime() <= this.clock.now().getTime()) return { kind: 'expired', projectId };
    if (callback.get('error') === 'access_denied') return { kind: 'denied', projectId };
    const secret = this.box && login.application ? openOrNull(this.box, login.application.clientSecretSealed) : null;
    const verifier = this.box ? openOrNull(this.box, login.codeVerifierSealed) : null;
    if (!this.box || !login.application || secret === null || verifier === null) return { kind: 'unavailable', projectId, error: 'Login with Discord is no longer set up' };
    const answer = await this.oauth.exchange({
      clientId: login.application.applicationId,
      clientSecret: secret,
      redirectUri: this.options.redirectUri,
      callback,
      state,
      codeVerifier: verifier,
    });
    if (answer.kind === 'denied') return { kind: 'denied', projectId };
    if (answer.kind !== 'ok') return { ...answer, projectId };
    if (login.rejoin) return this.rejoin(this.box, projectId, login.rejoin, answer, digestOf(state));
    if (login.planId === null) {
      const signedIn = await this.portal.signIn(projectId, answer.userId);
      return signedIn.kind === 'link' ? { kind: 'portal', token: signedIn.token, projectId } : { kind: 'no-member', projectId };
    }
    await this.store.saveMemberToken(this.tokenOf(this.box, projectId, answer));
    const link = await this.payLinks.create(projectId, { planId: login.planId, userId: answer.userId });
    if (!link.ok) return { kind: 'no-pay-link', projectId, message: link.error.message };
    return { kind: 'pay', payLinkId: link.value.pay_link_id, projectId };
  }

  /**
   * A rejoin's answer: only the member's own Discord account is taken (the portal's session said
   * who they are; Discord says who logged in). Their token is kept and the join queued for the
   * guild job together; the browser then opens a new portal link of theirs, where the join's
   * standing shows.
   */
  private async rejoin(box: SecretBox, projectId: string, rejoin: Rejoin, answer: Extract<Exchanged, { kind: 'ok' }>, stateHash: string): Promise<FinishOutcome> {
    if (!sameText(answer.userId, rejoin.userId)) return { kind: 'wrong-account', projectId };
    await this.store.saveRejoin({ ...this.tokenOf(box, projectId, answer), guildId: rejoin.guildId, dedupeKey: `rejoin:${stateHash}`, now: this.clock.now() });
    const signedIn = await this.portal.signIn(projectId, rejoin.userId);
    return signedIn.kind === 'link' ? { kind: 'rejoin', token: signedIn.token, projectId } : { kind: 'no-member', projectId };
  }

  /** The member's tokens, sealed, as Discord gave them. */
  private tokenOf(box: SecretBox, projectId: string, answer: Extract<Exchanged, { kind: 'ok' }>): MemberToken {
    return {
      projectId,
      userId: answer.userId,
      accessTokenSealed: box.seal(answer.accessToken),
      refreshTokenSealed: answer.refreshToken === null ? null : box.seal(answer.refreshToken),
      expiresAt: new Date(this.clock.now().getTime() + answer.expiresInSeconds * 1000),
    };
  }
}
