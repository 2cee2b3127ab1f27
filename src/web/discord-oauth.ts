import * as oauth from 'oauth4webapi';
import type { DiscordOAuth, Exchanged, Refreshed } from '../domain/web/discord-login.service.js';

/**
 * Discord's OAuth2 endpoints through oauth4webapi (docs/web.md, "Login with Discord"): the
 * authorize URL (the scopes the login asks for, PKCE S256), the code exchange at `{api}/oauth2/token`
 * (client secret by HTTP Basic), and `GET {api}/v10/users/@me` with the member's Bearer token.
 * `apiUrl` is TENURE_DISCORD_API_URL (`https://discord.com/api`); the authorize page lives at its
 * origin (`https://discord.com/oauth2/authorize`), so a test's fake Discord serves both.
 */

const TIMEOUT_MS = 10_000;

export function discordOAuth(apiUrl: string): DiscordOAuth {
  const api = apiUrl.replace(/\/+$/, '');
  const origin = new URL(api).origin;
  const as: oauth.AuthorizationServer = {
    issuer: origin,
    authorization_endpoint: `${origin}/oauth2/authorize`,
    token_endpoint: `${api}/oauth2/token`,
  };
  // Only a local fake is plain http; Discord itself is https.
  const insecure = as.issuer.startsWith('http:') ? { [oauth.allowInsecureRequests]: true } : {};
  const options = () => ({ ...insecure, signal: AbortSignal.timeout(TIMEOUT_MS) });

  return {
    async pkce() {
      const verifier = oauth.generateRandomCodeVerifier();
      return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
    },

    authorizeUrl({ clientId, redirectUri, state, codeChallenge, scope }) {
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        scope,
        redirect_uri: redirectUri,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
        // Ask each time: the buyer sees which account pays and what tenure may do.
        prompt: 'consent',
      }).toString();
      return url.href;
    },

    async refresh({ clientId, clientSecret, refreshToken }): Promise<Refreshed> {
      const client: oauth.Client = { client_id: clientId };
      try {
        const response = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretBasic(clientSecret), refreshToken, options());
        const token = await oauth.processRefreshTokenResponse(as, client, response);
        return { kind: 'ok', ...tokensOf(token) };
      } catch (err) {
        return grantFailure(err);
      }
    },

    async exchange({ clientId, clientSecret, redirectUri, callback, state, codeVerifier }): Promise<Exchanged> {
      const client: oauth.Client = { client_id: clientId };
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse(as, client, callback, state);
      } catch (err) {
        if (err instanceof oauth.AuthorizationResponseError) return err.error === 'access_denied' ? { kind: 'denied' } : { kind: 'refused', error: err.error };
        return { kind: 'refused', error: 'the answer from Discord was not a valid authorization response' };
      }
      try {
        const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(clientSecret), params, redirectUri, codeVerifier, options());
        const token = await oauth.processAuthorizationCodeResponse(as, client, response);
        const me = await oauth.protectedResourceRequest(token.access_token, 'GET', new URL(`${api}/v10/users/@me`), undefined, null, options());
        if (!me.ok) return me.status >= 500 || me.status === 429 ? { kind: 'unavailable', error: `users/@me answered ${me.status}` } : { kind: 'refused', error: `users/@me answered ${me.status}` };
        const user = (await me.json()) as { id?: unknown };
        if (typeof user.id !== 'string' || !/^\d{17,20}$/.test(user.id)) return { kind: 'refused', error: 'users/@me gave no user id' };
        return { kind: 'ok', userId: user.id, ...tokensOf(token) };
      } catch (err) {
        return grantFailure(err);
      }
    },
  };
}

/** The tokens of a grant's answer; Discord's access tokens last a week when it does not say. */
function tokensOf(token: oauth.TokenEndpointResponse): { accessToken: string; refreshToken: string | null; expiresInSeconds: number } {
  return {
    accessToken: token.access_token,
    refreshToken: typeof token.refresh_token === 'string' ? token.refresh_token : null,
    expiresInSeconds: typeof token.expires_in === 'number' ? token.expires_in : 604_800,
  };
}

/** A grant that threw: refused by Discord (a 4xx OAuth2 error, a bad client), or Discord unavailable. */
function grantFailure(err: unknown): { kind: 'refused' | 'unavailable'; error: string } {
  if (err instanceof oauth.ResponseBodyError) return err.status >= 500 ? { kind: 'unavailable', error: err.error } : { kind: 'refused', error: err.error };
  if (err instanceof oauth.WWWAuthenticateChallengeError) return { kind: 'refused', error: 'invalid_client' };
  // Unreachable, timed out, or an answer that is not OAuth2's: nothing the buyer did.
  return { kind: 'unavailable', error: err instanceof Error ? err.name : 'unknown' };
}
