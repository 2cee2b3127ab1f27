import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { LinkRefusal } from '../../domain/dashboard/dashboard.types.js';
import { SESSION_MAX_MS } from '../../domain/dashboard/sessions.service.js';
import { messagePage, type DashboardContext, type DashboardDeps } from './context.js';

/**
 * Signing in to the dashboard (docs/dashboard.md, "Signing in"): `GET /dashboard` says what it is
 * and how to get in; a one-time link (`npx tenure admin link`) opens a page with one button, so a
 * chat app's link preview does not spend it, and its POST starts the session; sign-out ends it.
 * Discord and Telegram: src/http/dashboard/sign-in-accounts.pages.ts.
 */

/** The session's cookie: scoped to the project's dashboard, so one browser can hold several projects. */
export const SESSION_COOKIE = 'tenure_dashboard';

export function sessionCookieOptions(context: DashboardContext, projectId: string) {
  // No trailing slash: the path matches /dashboard/{id} itself and everything under it.
  return { path: `${context.base}/dashboard/${encodeURIComponent(projectId)}`, httpOnly: true, sameSite: 'lax' as const, secure: context.secure };
}

/** Sets the new session's cookie and goes on to the project's overview. */
export function enterDashboard(reply: FastifyReply, context: DashboardContext, projectId: string, token: string) {
  // Kept by the browser as long as the session can live at most; the server ends it sooner when idle or revoked.
  reply.setCookie(SESSION_COOKIE, token, { ...sessionCookieOptions(context, projectId), maxAge: SESSION_MAX_MS / 1000 });
  return reply.header('cache-control', 'no-store').redirect(`${context.base}/dashboard/${encodeURIComponent(projectId)}`, 303);
}

const hidden = { config: { public: true }, schema: { hide: true } };

const REFUSED: Record<LinkRefusal, { status: number; title: string; line: string }> = {
  unknown: { status: 404, title: 'This sign-in link is not valid', line: 'Check that you opened all of it. Links are long: a chat app may have cut it.' },
  used: { status: 410, title: 'This sign-in link was already used', line: 'Each link works once. If that was not you, revoke the session on the Sessions page.' },
  expired: { status: 410, title: 'This sign-in link has expired', line: 'A link works for 15 minutes after it was made.' },
  'not-admin': { status: 403, title: 'This account is no longer an admin', line: 'The link was made for an admin who has since been removed from the project.' },
};
const NEW_LINK = 'Make a new one with: npx tenure admin link --project <project id>';

export const signInPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const sessions = services.dashboardSessions;
  const refused = (reply: FastifyReply, reason: LinkRefusal) => {
    const r = REFUSED[reason];
    return messagePage(reply, r.status, { title: r.title, lines: [r.line, NEW_LINK, 'Nothing was changed.'] });
  };

  app.get('/dashboard', hidden, async (_request, reply) =>
    reply.code(200).header('cache-control', 'no-store').type('text/html; charset=utf-8').view('home', { title: 'tenure dashboard', base: context.base }),
  );

  app.get<{ Params: { token: string } }>('/dashboard/sign-in/:token', hidden, async (request, reply) => {
    const link = await sessions.peekLink(request.params.token);
    if ('refused' in link) return refused(reply, link.refused);
    return reply.code(200).header('cache-control', 'no-store').type('text/html; charset=utf-8').view('sign-in-link', {
      title: `Sign in to ${link.projectName}`,
      base: context.base,
      projectName: link.projectName,
      who: link.userId === null ? 'the project owner, with every permission' : `admin ${link.userId}`,
      action: `${context.base}/dashboard/sign-in/${request.params.token}`,
      csrf: reply.generateCsrf(),
    });
  });

  app.post<{ Params: { token: string } }>('/dashboard/sign-in/:token', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const spent = await sessions.spendLink(request.params.token, request.headers['user-agent']);
    if (spent.kind === 'refused') return refused(reply, spent.reason);
    await services.dashboardAudit.record({ projectId: spent.projectId, userId: spent.userId, sessionId: spent.sessionId }, 'session.sign-in', spent.sessionId, { method: 'link' });
    return enterDashboard(reply, context, spent.projectId, spent.token);
  });
};
