/**
 * The owner's dashboard (docs/dashboard.md): what its sessions, sign-in links and audit log look
 * like to the domain. The statements are src/store/dashboard-sessions.store.ts and
 * src/store/dashboard-audit.store.ts.
 */

/** How a session began. */
export type SignInMethod = 'link' | 'discord' | 'telegram';

/** A session as the dashboard reads it on every request, with the actor's current permissions. */
export interface SessionRecord {
  id: string;
  projectId: string;
  projectName: string;
  /** The admin; null: the project's owner. */
  userId: string | null;
  method: SignInMethod;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  /** The admin's permissions now (null: no longer an admin, or the owner). */
  permissions: string[] | null;
  /** The admin's name as the project knows it. */
  firstName: string | null;
  username: string | null;
}

/** A session as the sessions page lists it. */
export interface SessionView {
  id: string;
  userId: string | null;
  name: string | null;
  method: SignInMethod;
  userAgent: string | null;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface NewSession {
  projectId: string;
  tokenHash: string;
  userId: string | null;
  method: SignInMethod;
  userAgent: string | null;
  now: Date;
  expiresAt: Date;
}

/** Why a sign-in link did not start a session. */
export type LinkRefusal = 'unknown' | 'used' | 'expired' | 'not-admin';

/** One row of the audit log. */
export interface AuditEntry {
  id: number;
  actorUserId: string | null;
  actorName: string | null;
  sessionId: string | null;
  action: string;
  subject: string | null;
  details: Record<string, unknown>;
  at: Date;
}

export interface NewAuditEntry {
  projectId: string;
  actorUserId: string | null;
  sessionId: string | null;
  action: string;
  subject?: string | null;
  details?: Record<string, unknown>;
  at: Date;
}

export interface Page {
  limit: number;
  offset: number;
}
