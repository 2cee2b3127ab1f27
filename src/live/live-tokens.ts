import { randomBytes } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import type { Principal } from '../domain/projects/auth.service.js';
import type { InstanceSecretsStore } from '../store/instance-secrets.store.js';

/**
 * Short-lived live-update tokens (docs/live-updates.md "From a browser"): a JWT (HS256) scoped to
 * one project, minted with an API key so a browser never holds the key. It names the key that
 * minted it, so revoking the key ends its tokens too. The signing key is TENURE_LIVE_TOKEN_SECRET,
 * or else a random secret stored once in `instance_secrets`, so every node verifies every node's
 * tokens with no configuration.
 */

const ISSUER = 'tenure';
const AUDIENCE = 'tenure:live-updates';
const SECRET_NAME = 'live_token_signing_key';

export interface MintedToken {
  token: string;
  project_id: string;
  expires_at: string;
  expires_in: number;
}

export interface TokenSubject {
  projectId: string;
  keyId: string;
}

/** A JWT's shape: three base64url parts. Anything else is not worth verifying. */
export const looksLikeLiveToken = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

export class LiveTokenService {
  private key: Promise<Uint8Array> | null = null;

  constructor(
    private readonly secrets: InstanceSecretsStore,
    private readonly options: { ttlSeconds: number; secret: string | undefined },
    private readonly clock: Clock,
  ) {}

  /** Mints a token for `principal`'s project, valid for the configured TTL. */
  async mint(principal: Pick<Principal, 'keyId' | 'projectId'>): Promise<MintedToken> {
    const now = this.clock.now();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + this.options.ttlSeconds;
    const token = await new SignJWT({ key_id: principal.keyId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(principal.projectId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBytes(12).toString('base64url'))
      .sign(await this.signingKey());
    return {
      token,
      project_id: principal.projectId,
      expires_at: new Date(exp * 1000).toISOString(),
      expires_in: this.options.ttlSeconds,
    };
  }

  /** Checks a token for `projectId`. Every failure says plainly what is wrong. */
  async verify(token: string, projectId: string): Promise<Result<TokenSubject>> {
    if (!looksLikeLiveToken(token)) return fail('UNAUTHORIZED', 'Malformed token: send an API key of the project or a live-update token');
    try {
      const { payload } = await jwtVerify(token, await this.signingKey(), {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
        currentDate: this.clock.now(),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (typeof payload.key_id !== 'string' || typeof payload.sub !== 'string') {
        return fail('UNAUTHORIZED', 'Invalid live-update token');
      }
      if (payload.sub !== projectId) return fail('FORBIDDEN', 'This live-update token was minted for another project');
      return ok({ projectId: payload.sub, keyId: payload.key_id });
    } catch (err) {
      if (err instanceof errors.JWTExpired) return fail('UNAUTHORIZED', 'Live-update token expired; mint a new one');
      if (err instanceof errors.JOSEError) return fail('UNAUTHORIZED', 'Invalid live-update token');
      throw err;
    }
  }

  private signingKey(): Promise<Uint8Array> {
    this.key ??= this.loadKey().catch((err: unknown) => {
      // A failed read (database down) is retried by the next call, not remembered.
      this.key = null;
      throw err;
    });
    return this.key;
  }

  private async loadKey(): Promise<Uint8Array> {
    if (this.options.secret) return new TextEncoder().encode(this.options.secret);
    const stored = await this.secrets.getOrCreate(SECRET_NAME, randomBytes(32).toString('base64url'));
    return new Uint8Array(Buffer.from(stored, 'base64url'));
  }
}
