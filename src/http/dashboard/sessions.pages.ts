import type { FastifyPluginAsync } from 'fastify';
import { may } from '../../domain/dashboard/actor.js';
import { isUuid } from '../../domain/ids.js';
import { actorOf, audit, dashboardPage, messagePage, projectPath, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { pageOf, pagerOf, when } from './paging.js';
import { SESSION_COOKIE, sessionCookieOptions } from './sign-in.pages.js';

/**
 * The sessions page (`/dashboard/{project_id}/sessions`, docs/dashboard.md, "Sessions"): your own
 * sessions always, everyone's with `admins:read`; revoking your own always, anyone's with
 * `admins:update`, after a confirmation page. Revoking the session you are using signs you out.
 * The audit page (`/audit`, `admins:read`): the log newest first, 50 a page.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { Params: { project_id: string } };
type SessionParams = { Params: { project_id: string; session_id: string } };
const METHOD = { link: 'One-time link', discord: 'Discord', telegram: 'Telegram' } as const;

export const sessionsPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const sessions = services.dashboardSessions;

  app.get<Params>('/dashboard/:project_id/sessions', hidden, async (request, reply) => {
    const actor = actorOf(request);
    const { page, limit, offset } = pageOf(request.query);
    const list = await sessions.list(actor, { limit, offset });
    const now = Date.now();
    const everyone = may(actor, 'admins:read');
    const canRevokeOthers = may(actor, 'admins:update');
    return dashboardPage(reply, 'sessions', {
      title: 'Sessions',
      section: 'sessions',
      notices: { revoked: 'Session revoked: it no longer works.' },
      everyone,
      sessions: list.items.map((s) => {
        const live = s.revokedAt === null && s.expiresAt.getTime() > now;
        const mine = s.userId === actor.userId;
        return {
          id: s.id,
          who: s.userId === null ? 'Owner' : s.name ? `${s.name} (${s.userId})` : s.userId,
          method: METHOD[s.method],
          started: when(s.createdAt),
          lastSeen: when(s.lastSeenAt),
          state: s.revokedAt !== null ? `Revoked ${when(s.revokedAt)}` : live ? `Until ${when(s.expiresAt)}` : `Expired ${when(s.expiresAt)}`,
          tone: live ? 'ok' : '',
          current: s.id === actor.sessionId,
          agent: s.userAgent ?? '',
          revocable: live && (mine || canRevokeOthers),
        };
      }),
      pager: pagerOf(projectPath(context, actor.projectId, '/sessions'), page, list.total),
    });
  });

  app.get<SessionParams>('/dashboard/:project_id/sessions/:session_id/revoke', hidden, async (request, reply) => {
    const actor = actorOf(request);
    const self = request.params.session_id === actor.sessionId;
    return dashboardPage(reply, 'confirm', {
      title: self ? 'Sign out this session?' : 'Revoke this session?',
      section: 'sessions',
      lines: self
        ? ['This is the session you are using: revoking it signs you out here.']
        : ['Whoever uses it is signed out at their next click, and must sign in again.'],
      action: projectPath(context, actor.projectId, `/sessions/${encodeURIComponent(request.params.session_id)}/revoke`),
      confirmLabel: 'Yes, revoke it',
      back: projectPath(context, actor.projectId, '/sessions'),
      backLabel: 'No, keep it',
      danger: true,
    });
  });

  app.post<SessionParams>('/dashboard/:project_id/sessions/:session_id/revoke', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = actorOf(request);
    const id = request.params.session_id.toLowerCase();
    const revoked = isUuid(id) ? await sessions.revoke(actor, id) : null;
    if (!revoked?.ok) {
      return messagePage(reply, 404, {
        title: 'No such session to revoke',
        lines: ['It has ended already, or it is not one you may revoke (another admin’s needs admins:update). Nothing was changed.'],
        action: { href: projectPath(context, actor.projectId, '/sessions'), label: 'Back to the sessions' },
      });
    }
    await audit(request, 'session.revoke', id, { of: revoked.value.userId ?? 'owner' });
    if (!revoked.value.self) return seeOther(reply, '/sessions', 'revoked');
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(context, actor.projectId));
    return reply.header('cache-control', 'no-store').redirect(`${projectPath(context, actor.projectId)}/sign-in?signed_out=1`, 303);
  });

  app.get<Params>('/dashboard/:project_id/audit', hidden, async (request, reply) => {
    const actor = requirePermission(request, 'admins:read');
    const { page, limit, offset } = pageOf(request.query);
    const list = await services.dashboardAudit.list(actor.projectId, { limit, offset });
    return dashboardPage(reply, 'audit', {
      title: 'Audit log',
      section: 'audit',
      entries: list.items.map((e) => ({
        at: when(e.at),
        who: e.actorUserId === null ? 'Owner' : e.actorName ? `${e.actorName} (${e.actorUserId})` : e.actorUserId,
        action: e.action,
        subject: e.subject ?? '',
        details: detailsText(e.details),
      })),
      pager: pagerOf(projectPath(context, actor.projectId, '/audit'), page, list.total),
    });
  });
};

/** An entry's details as text: `before: a, b; after: c` (lists joined, anything deeper as JSON). */
function detailsText(details: Record<string, unknown>): string {
  const value = (v: unknown) => (Array.isArray(v) ? (v.length === 0 ? 'none' : v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ')) : typeof v === 'string' ? v : JSON.stringify(v));
  return Object.entries(details).map(([k, v]) => `${k}: ${value(v)}`).join('; ');
}
