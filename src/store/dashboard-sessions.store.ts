import { sql } from 'drizzle-orm';
import type { LinkRefusal, NewSession, Page, SessionRecord, SessionView, SignInMethod } from '../domain/dashboard/dashboard.types.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';

/**
 * The dashboard's sessions, one-time sign-in links and Discord sign-ins under way (docs/dashboard.md,
 * "Signing in", "Sessions"). Tokens arrive here as their SHA-256 digests only.
 */

type Instant = Date | string;
const date = (v: Instant): Date => new Date(v);
const dateOrNull = (v: Instant | null): Date | null => (v === null ? null : new Date(v));

/** How long a used or expired link or login stays before it is swept (a clear "already used" meanwhile). */
const KEEP_MS = 24 * 3_600_000;

export class DashboardSessionsStore {
  constructor(private readonly db: Db) {}

  async createSession(s: NewSession): Promise<{ id: string }> {
    const rows = rowsOf<{ id: string }>(
      await this.db.execute(sql`
        INSERT INTO dashboard_sessions (project_id, token_hash, user_id, method, user_agent, created_at, last_seen_at, expires_at)
        VALUES (${s.projectId}, ${s.tokenHash}, ${s.userId}, ${s.method}, ${s.userAgent}, ${at(s.now)}, ${at(s.now)}, ${at(s.expiresAt)})
        RETURNING id`),
    );
    return rows[0]!;
  }

  /** The session of a cookie, with its project's name and the admin's permissions as they are now; null: none. */
  async findSession(tokenHash: string): Promise<SessionRecord | null> {
    const rows = rowsOf<{
      id: string; projectId: string; projectName: string; userId: string | null; method: SignInMethod;
      createdAt: Instant; lastSeenAt: Instant; expiresAt: Instant; revokedAt: Instant | null;
      permissions: string[] | null; firstName: string | null; username: string | null;
    }>(
      await this.db.execute(sql`
        SELECT s.id, s.project_id AS "projectId", p.name AS "projectName", s.user_id AS "userId", s.method,
               s.created_at AS "createdAt", s.last_seen_at AS "lastSeenAt", s.expires_at AS "expiresAt", s.revoked_at AS "revokedAt",
               to_jsonb(a.permissions) AS permissions, u.first_name AS "firstName", u.username
        FROM dashboard_sessions s JOIN projects p ON p.id = s.project_id
        LEFT JOIN admins a ON a.project_id = s.project_id AND a.user_id = s.user_id
        LEFT JOIN users u ON u.project_id = s.project_id AND u.user_id = s.user_id
        WHERE s.token_hash = ${tokenHash}`),
    );
    const r = rows[0];
    if (!r) return null;
    return {
      ...r,
      createdAt: date(r.createdAt),
      lastSeenAt: date(r.lastSeenAt),
      expiresAt: date(r.expiresAt),
      revokedAt: dateOrNull(r.revokedAt),
    };
  }

  /** Records a use of a live session and its new expiry. */
  async touchSession(id: string, now: Date, expiresAt: Date): Promise<void> {
    await this.db.execute(sql`
      UPDATE dashboard_sessions SET last_seen_at = ${at(now)}, expires_at = ${at(expiresAt)}
      WHERE id = ${id} AND revoked_at IS NULL`);
  }

  /** The project's sessions (or, with `userId`, that actor's: '' for the owner's), newest first. */
  async listSessions(projectId: string, only: { userId: string | null } | null, page: Page): Promise<{ items: SessionView[]; total: number }> {
    const who = only === null ? sql`true` : only.userId === null ? sql`s.user_id IS NULL` : sql`s.user_id = ${only.userId}`;
    const [items, count] = await Promise.all([
      this.db.execute(sql`
        SELECT s.id, s.user_id AS "userId", coalesce(u.first_name, u.username) AS name, s.method, s.user_agent AS "userAgent",
               s.created_at AS "createdAt", s.last_seen_at AS "lastSeenAt", s.expires_at AS "expiresAt", s.revoked_at AS "revokedAt"
        FROM dashboard_sessions s LEFT JOIN users u ON u.project_id = s.project_id AND u.user_id = s.user_id
        WHERE s.project_id = ${projectId} AND ${who}
        ORDER BY s.created_at DESC, s.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM dashboard_sessions s WHERE s.project_id = ${projectId} AND ${who}`),
    ]);
    type Row = Omit<SessionView, 'createdAt' | 'lastSeenAt' | 'expiresAt' | 'revokedAt'> & { createdAt: Instant; lastSeenAt: Instant; expiresAt: Instant; revokedAt: Instant | null };
    return {
      items: rowsOf<Row>(items).map((r) => ({ ...r, createdAt: date(r.createdAt), lastSeenAt: date(r.lastSeenAt), expiresAt: date(r.expiresAt), revokedAt: dateOrNull(r.revokedAt) })),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }

  /** Revokes a live session of the project (with `only`, only that actor's); the session's owner, or null when nothing was revoked. */
  async revokeSession(projectId: string, id: string, now: Date, only: { userId: string | null } | null): Promise<{ userId: string | null } | null> {
    const who = only === null ? sql`true` : only.userId === null ? sql`user_id IS NULL` : sql`user_id = ${only.userId}`;
    const rows = rowsOf<{ userId: string | null }>(
      await this.db.execute(sql`
        UPDATE dashboard_sessions SET revoked_at = ${at(now)}
        WHERE project_id = ${projectId} AND id = ${id} AND revoked_at IS NULL AND expires_at > ${at(now)} AND ${who}
        RETURNING user_id AS "userId"`),
    );
    return rows[0] ?? null;
  }

  /** Records a one-time link; links past their day of grace go with it. */
  async createLink(l: { tokenHash: string; projectId: string; userId: string | null; now: Date; expiresAt: Date }): Promise<void> {
    await this.db.execute(sql`
      WITH swept AS (DELETE FROM dashboard_links WHERE expires_at < ${at(new Date(l.now.getTime() - KEEP_MS))})
      INSERT INTO dashboard_links (token_hash, project_id, user_id, created_at, expires_at)
      VALUES (${l.tokenHash}, ${l.projectId}, ${l.userId}, ${at(l.now)}, ${at(l.expiresAt)})`);
  }

  /** Whether a link can still be spent: its project, or why not. Reads only (the confirm page). */
  async peekLink(tokenHash: string, now: Date): Promise<{ projectId: string; projectName: string; userId: string | null } | { refused: LinkRefusal }> {
    const rows = rowsOf<{ projectId: string; projectName: string; userId: string | null; usedAt: Instant | null; expiresAt: Instant; admin: boolean }>(
      await this.db.execute(sql`
        SELECT l.project_id AS "projectId", p.name AS "projectName", l.user_id AS "userId", l.used_at AS "usedAt", l.expires_at AS "expiresAt",
               (l.user_id IS NULL OR EXISTS (SELECT 1 FROM admins a WHERE a.project_id = l.project_id AND a.user_id = l.user_id)) AS admin
        FROM dashboard_links l JOIN projects p ON p.id = l.project_id WHERE l.token_hash = ${tokenHash}`),
    );
    const r = rows[0];
    if (!r) return { refused: 'unknown' };
    if (r.usedAt !== null) return { refused: 'used' };
    if (date(r.expiresAt).getTime() <= now.getTime()) return { refused: 'expired' };
    if (!r.admin) return { refused: 'not-admin' };
    return { projectId: r.projectId, projectName: r.projectName, userId: r.userId };
  }

  /**
   * Spends a link and starts its session in one statement: only a link never used, not expired, whose
   * admin (if any) still is one. null when nothing was spent (peekLink then says why).
   */
  async spendLink(tokenHash: string, s: Omit<NewSession, 'projectId' | 'userId' | 'method'>): Promise<{ id: string; projectId: string; userId: string | null } | null> {
    const rows = rowsOf<{ id: string; projectId: string; userId: string | null }>(
      await this.db.execute(sql`
        WITH l AS (
          UPDATE dashboard_links l SET used_at = ${at(s.now)}
          WHERE l.token_hash = ${tokenHash} AND l.used_at IS NULL AND l.expires_at > ${at(s.now)}
            AND (l.user_id IS NULL OR EXISTS (SELECT 1 FROM admins a WHERE a.project_id = l.project_id AND a.user_id = l.user_id))
          RETURNING l.project_id, l.user_id
        )
        INSERT INTO dashboard_sessions (project_id, token_hash, user_id, method, user_agent, created_at, last_seen_at, expires_at)
        SELECT project_id, ${s.tokenHash}, user_id, 'link', ${s.userAgent}, ${at(s.now)}, ${at(s.now)}, ${at(s.expiresAt)} FROM l
        RETURNING id, project_id AS "projectId", user_id AS "userId"`),
    );
    return rows[0] ?? null;
  }

  /** Records a Discord sign-in under way; those expired a day ago go with it. */
  async saveLogin(l: { stateHash: string; projectId: string; codeVerifierSealed: string; now: Date; expiresAt: Date }): Promise<void> {
    await this.db.execute(sql`
      WITH swept AS (DELETE FROM dashboard_logins WHERE expires_at < ${at(new Date(l.now.getTime() - KEEP_MS))})
      INSERT INTO dashboard_logins (state_hash, project_id, code_verifier_sealed, created_at, expires_at)
      VALUES (${l.stateHash}, ${l.projectId}, ${l.codeVerifierSealed}, ${at(l.now)}, ${at(l.expiresAt)})`);
  }

  /** Deletes a sign-in under way and answers it (single use); null: none. */
  async takeLogin(stateHash: string): Promise<{ projectId: string; codeVerifierSealed: string; expiresAt: Date } | null> {
    const rows = rowsOf<{ projectId: string; codeVerifierSealed: string; expiresAt: Instant }>(
      await this.db.execute(sql`
        DELETE FROM dashboard_logins WHERE state_hash = ${stateHash}
        RETURNING project_id AS "projectId", code_verifier_sealed AS "codeVerifierSealed", expires_at AS "expiresAt"`),
    );
    const r = rows[0];
    return r ? { ...r, expiresAt: date(r.expiresAt) } : null;
  }

  /** The project's name, and its admin's permissions (`userId` given): null when there is no such project. */
  async projectActor(projectId: string, userId: string | null): Promise<{ projectName: string; permissions: string[] | null } | null> {
    const rows = rowsOf<{ projectName: string; permissions: string[] | null }>(
      await this.db.execute(sql`
        SELECT p.name AS "projectName", to_jsonb(a.permissions) AS permissions
        FROM projects p LEFT JOIN admins a ON a.project_id = p.id AND a.user_id = ${userId}
        WHERE p.id = ${projectId}`),
    );
    return rows[0] ?? null;
  }
}
