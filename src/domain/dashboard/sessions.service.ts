import type { DashboardSessionsStore } from '../../store/dashboard-sessions.store.js';
import type { Clock } from '../clock.js';
import { fail, ok, type Result } from '../errors.js';
import { may, OWNER_PERMISSIONS, type Actor } from './actor.js';
import type { LinkRefusal, Page, SessionView, SignInMethod } from './dashboard.types.js';
import { digestOf, isDashboardToken, newDashboardToken } from './tokens.js';

/**
 * The dashboard's sessions (docs/dashboard.md, "Signing in", "Sessions"). A session starts from a
 * one-time link (`npx tenure admin link`), Discord or Telegram; its cookie holds 256 random bits,
 * the table their digest. It lasts 12 hours after its last use and never more than 7 days; it can
 * be revoked. Every request reads the admin's permissions afresh (`resolve`), so a removed admin
 * or a changed set acts at once.
 */

export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
export const LINK_TTL_MS = 15 * 60_000;
/** A use is written back at most this often (every page view would otherwise be a write). */
const TOUCH_EVERY_MS = 60_000;
/** How much of a browser's User-Agent is kept to tell sessions apart. */
const USER_AGENT_CHARS = 160;

export type DashboardSessionStatements = Pick<
  DashboardSessionsStore,
  'createSession' | 'findSession' | 'touchSession' | 'listSessions' | 'revokeSession' | 'createLink' | 'peekLink' | 'spendLink' | 'projectActor'
>;

export type LinkSpent = { kind: 'ok'; token: string; projectId: string; sessionId: string; userId: string | null } | { kind: 'refused'; reason: LinkRefusal };

export class DashboardSessions {
  constructor(
    private readonly store: DashboardSessionStatements,
    private readonly clock: Clock,
    private readonly options: { publicUrl: string },
  ) {}

  /** A one-time sign-in link for the project's owner (`userId` null) or one of its admins. */
  async createLink(projectId: string, userId: string | null): Promise<Result<{ url: string; expiresAt: Date }>> {
    const project = await this.store.projectActor(projectId, userId);
    if (!project) return fail('NOT_FOUND', `Project ${projectId} not found`);
    if (userId !== null && project.permissions === null) return fail('NOT_FOUND', `User ${userId} is not an admin of project ${projectId}`);
    const token = newDashboardToken();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + LINK_TTL_MS);
    await this.store.createLink({ tokenHash: digestOf(token), projectId, userId, now, expiresAt });
    return ok({ url: `${this.options.publicUrl.replace(/\/+$/, '')}/dashboard/sign-in/${token}`, expiresAt });
  }

  /** Whether the link can still be spent (the confirm page, which spends nothing). */
  async peekLink(token: string): Promise<{ projectId: string; projectName: string; userId: string | null } | { refused: LinkRefusal }> {
    if (!isDashboardToken(token)) return { refused: 'unknown' };
    return this.store.peekLink(digestOf(token), this.clock.now());
  }

  /** Spends the link (once) and starts its session: the new session's cookie value. */
  async spendLink(token: string, userAgent: string | undefined): Promise<LinkSpent> {
    if (!isDashboardToken(token)) return { kind: 'refused', reason: 'unknown' };
    const session = newDashboardToken();
    const now = this.clock.now();
    const spent = await this.store.spendLink(digestOf(token), { tokenHash: digestOf(session), userAgent: trimAgent(userAgent), now, expiresAt: this.expiryOf(now, now) });
    if (spent) return { kind: 'ok', token: session, projectId: spent.projectId, sessionId: spent.id, userId: spent.userId };
    const why = await this.store.peekLink(digestOf(token), now);
    // Spent by a request that raced this one: the link is used.
    return { kind: 'refused', reason: 'refused' in why ? why.refused : 'used' };
  }

  /** Starts a session for an admin who proved who they are (Discord, Telegram): its cookie value. */
  async start(projectId: string, userId: string, method: Exclude<SignInMethod, 'link'>, userAgent: string | undefined): Promise<{ token: string; sessionId: string }> {
    const token = newDashboardToken();
    const now = this.clock.now();
    const { id } = await this.store.createSession({ projectId, tokenHash: digestOf(token), userId, method, userAgent: trimAgent(userAgent), now, expiresAt: this.expiryOf(now, now) });
    return { token, sessionId: id };
  }

  /** The actor of a cookie for `projectId`: null when there is no live session of this project, or its admin is an admin no more. */
  async resolve(projectId: string, cookie: string | undefined): Promise<Actor | null> {
    if (!isDashboardToken(cookie)) return null;
    const s = await this.store.findSession(digestOf(cookie));
    const now = this.clock.now();
    if (!s || s.projectId !== projectId || s.revokedAt !== null || s.expiresAt.getTime() <= now.getTime()) return null;
    if (s.userId !== null && s.permissions === null) return null;
    if (now.getTime() - s.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await this.store.touchSession(s.id, now, this.expiryOf(s.createdAt, now));
    return {
      projectId: s.projectId,
      projectName: s.projectName,
      sessionId: s.id,
      userId: s.userId,
      name: s.firstName ?? s.username,
      method: s.method,
      permissions: s.userId === null ? OWNER_PERMISSIONS : (s.permissions ?? []),
    };
  }

  /** The sessions the actor may see: all of the project's with `admins:read`, else their own. */
  list(actor: Actor, page: Page): Promise<{ items: SessionView[]; total: number }> {
    return this.store.listSessions(actor.projectId, may(actor, 'admins:read') ? null : { userId: actor.userId }, page);
  }

  /** Revokes a live session: their own always, anyone's with `admins:update`. `self`: the actor's own one, so they are signed out. */
  async revoke(actor: Actor, sessionId: string): Promise<Result<{ self: boolean; userId: string | null }>> {
    const only = may(actor, 'admins:update') ? null : { userId: actor.userId };
    const revoked = await this.store.revokeSession(actor.projectId, sessionId, this.clock.now(), only);
    if (!revoked) return fail('NOT_FOUND', 'No such live session');
    return ok({ self: sessionId === actor.sessionId, userId: revoked.userId });
  }

  /** 12 hours from now, never past 7 days from the start. */
  private expiryOf(createdAt: Date, now: Date): Date {
    return new Date(Math.min(now.getTime() + SESSION_IDLE_MS, createdAt.getTime() + SESSION_MAX_MS));
  }
}

function trimAgent(userAgent: string | undefined): string | null {
  if (!userAgent) return null;
  return [...userAgent].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('').slice(0, USER_AGENT_CHARS);
}
