import { isUuid } from '../domain/ids.js';
import { fail, ok, type Result } from '../domain/errors.js';
import type { AuthService } from '../domain/projects/auth.service.js';
import { looksLikeKeySecret } from '../domain/projects/api-key-secret.js';
import type { LiveEventsStore } from '../store/live-events.store.js';
import { looksLikeLiveToken, type LiveTokenService } from './live-tokens.js';

/**
 * Who is connecting: the handshake's `auth: {token, project_id}` (docs/live-updates.md).
 * `token` is an API key of the project (servers) or a live-update token minted with one
 * (browsers). Every refusal names what is wrong; none echoes the token.
 */

export interface LiveClient {
  projectId: string;
  /** The API key that connected, or that minted the token: revoking it closes the connection. */
  keyId: string;
  via: 'api_key' | 'token';
}

export class HandshakeAuth {
  constructor(
    private readonly auth: AuthService,
    private readonly tokens: LiveTokenService,
    private readonly store: LiveEventsStore,
  ) {}

  async authenticate(handshakeAuth: unknown): Promise<Result<LiveClient>> {
    const { token, project_id: projectId } = (handshakeAuth ?? {}) as { token?: unknown; project_id?: unknown };
    if (token === undefined || token === null || token === '') {
      return fail('UNAUTHORIZED', 'Missing token: connect with auth: {token, project_id}, token being an API key or a live-update token');
    }
    if (typeof token !== 'string') return fail('UNAUTHORIZED', 'auth.token must be a string');
    if (typeof projectId !== 'string' || projectId === '') {
      return fail('VALIDATION_ERROR', 'Missing project_id: connect with auth: {token, project_id}');
    }
    if (looksLikeKeySecret(token)) {
      const principal = await this.auth.authenticate(`Bearer ${token}`);
      if (!principal.ok) return principal;
      const denied = this.auth.authorize(principal.value, projectId);
      if (denied) return { ok: false, error: denied };
      return ok({ projectId, keyId: principal.value.keyId, via: 'api_key' });
    }
    if (!looksLikeLiveToken(token)) {
      return fail('UNAUTHORIZED', 'Malformed token: send an API key of the project or a live-update token');
    }
    // A forged project id cannot match a signed one; checking its shape first keeps junk out of SQL.
    if (!isUuid(projectId)) return fail('FORBIDDEN', 'This live-update token was minted for another project');
    const subject = await this.tokens.verify(token, projectId);
    if (!subject.ok) return subject;
    if ((await this.store.unusableKeys([subject.value.keyId])).length > 0) {
      return fail('UNAUTHORIZED', 'The API key that minted this token has been revoked');
    }
    return ok({ projectId, keyId: subject.value.keyId, via: 'token' });
  }
}
