import type { FastifyPluginAsync } from 'fastify';
import { OVERVIEW_CAP } from '../../domain/dashboard/overview.service.js';
import { actorOf, dashboardPage, projectPath, SECTIONS, type DashboardDeps } from './context.js';
import { SESSION_COOKIE, sessionCookieOptions } from './sign-in.pages.js';

/** The overview (`/dashboard/{project_id}`): the project, a few capped counts, the sections; and signing out. */

const ABOUT: Record<string, string> = {
  members: 'who is in, who is leaving, and acting on a member',
  plans: 'plans, what each grants, targets and coupons',
  integrations: 'the Discord and Telegram bots and their problems, Stripe',
  webhooks: "your backend's endpoints, what was sent to them, replays",
  messages: 'what the bot tells members, reminders and quiet hours',
  money: 'revenue, MRR, new and churned members',
  admins: 'who may act on the project, with which permissions',
  sessions: 'where you and others are signed in',
  audit: 'what admins did, newest first',
};

const hidden = { config: { public: true }, schema: { hide: true } };
const shown = (n: number) => (n > OVERVIEW_CAP ? `more than ${OVERVIEW_CAP.toLocaleString('en-US')}` : n.toLocaleString('en-US'));

export const overviewPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  app.get<{ Params: { project_id: string } }>('/dashboard/:project_id', hidden, async (request, reply) => {
    const actor = actorOf(request);
    const counts = await services.dashboardOverview.counts(actor.projectId);
    return dashboardPage(reply, 'overview', {
      title: 'Overview',
      section: 'overview',
      notices: { 'signed-in': 'You are signed in.' },
      figures: { active: shown(counts.active), endingSoon: shown(counts.endingSoon), plans: shown(counts.plans), admins: shown(counts.admins) },
      sections: SECTIONS.filter((s) => s.key !== 'overview').map((s) => ({ label: s.label, href: projectPath(context, actor.projectId, s.path), about: ABOUT[s.key] ?? '' })),
    });
  });

  // Signing out revokes this session (not just the cookie) and clears it.
  app.post<{ Params: { project_id: string } }>('/dashboard/:project_id/sign-out', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = actorOf(request);
    await services.dashboardSessions.revoke(actor, actor.sessionId);
    await services.dashboardAudit.record(actor, 'session.sign-out', actor.sessionId);
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(context, actor.projectId));
    return reply.header('cache-control', 'no-store').redirect(`${projectPath(context, actor.projectId)}/sign-in?signed_out=1`, 303);
  });
};
