import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { SignedIn } from '../../domain/dashboard/sign-in.service.js';
import { isUuid } from '../../domain/ids.js';
import { TELEGRAM_WIDGET } from '../pages/telegram-login.pages.js';
import { messagePage, type DashboardDeps } from './context.js';
import { allowTelegramWidget } from './csp.js';
import { enterDashboard } from './sign-in.pages.js';

/**
 * A project's sign-in page (`/dashboard/{project_id}/sign-in`, docs/dashboard.md, "Signing in"):
 * Log in with Discord (a CSRF form; on to Discord's authorize page, back at
 * `/dashboard/discord/callback`) and the Telegram Login Widget (back at
 * `/dashboard/{project_id}/telegram/callback`). Each callback works only in the browser that began
 * it (a state or intent cookie scoped to the callback) and starts a session only for an admin.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { Params: { project_id: string } };
const STATE_COOKIE = 'tenure_dashboard_discord';
const INTENT_COOKIE = 'tenure_dashboard_telegram';
const NO_PROJECT = { title: 'No such dashboard', lines: ['There is no project at this address. Check that you opened all of the link.'] };

const REFUSED: Record<Extract<SignedIn, { kind: 'refused' }>['reason'], [number, string, string]> = {
  forged: [400, 'This sign-in did not start here', 'A sign-in must finish in the browser that started it, within 10 minutes.'],
  used: [410, 'This sign-in was already used', 'Each sign-in works once.'],
  expired: [410, 'This sign-in has expired', 'A sign-in must be finished within 10 minutes.'],
  denied: [403, 'Sign-in cancelled', 'Discord said you cancelled. Nothing was changed.'],
  refused: [400, 'Discord refused this sign-in', 'Try again; if it keeps failing, check the Discord application’s client secret and redirect address.'],
  unavailable: [503, 'Discord could not be reached', 'Please try again in a minute.'],
  malformed: [400, 'We could not check this login', 'The answer from Telegram was incomplete.'],
  'bad-hash': [400, 'We could not check this login', 'The answer from Telegram did not match this project’s bot.'],
  stale: [410, 'This login has expired', 'A Telegram login must reach us within 10 minutes; check your device’s clock.'],
  replayed: [410, 'This login was already used', 'Each login with Telegram works once.'],
  'not-configured': [409, 'This sign-in is not set up', 'The project has no Discord application secret or Telegram bot to check it with.'],
  unknown: [404, NO_PROJECT.title, NO_PROJECT.lines[0]!],
};

export const signInAccountsPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const signIn = services.dashboardSignIn;
  const signInPath = (projectId: string) => `${context.base}/dashboard/${encodeURIComponent(projectId)}/sign-in`;
  const cookie = (path: string) => ({ path: `${context.base}${path}`, httpOnly: true, sameSite: 'lax' as const, secure: context.secure, maxAge: 600 });

  const outcome = async (reply: FastifyReply, o: SignedIn, method: 'discord' | 'telegram') => {
    if (o.kind === 'session') {
      await services.dashboardAudit.record({ projectId: o.projectId, userId: o.userId, sessionId: o.sessionId }, 'session.sign-in', o.sessionId, { method });
      return enterDashboard(reply, context, o.projectId, o.token);
    }
    const back = o.projectId ? { href: signInPath(o.projectId), label: 'Back to the sign-in page' } : null;
    if (o.kind === 'not-admin') {
      return messagePage(reply, 403, { title: 'Not an admin of this project', lines: [`The account ${o.userId} is not an admin of this project, so it cannot sign in here. Ask the owner to add it on the Admins page.`], action: back });
    }
    const [status, title, line] = REFUSED[o.reason];
    return messagePage(reply, status, { title, lines: [line, 'Nothing was changed.'], action: back });
  };

  app.get<Params>('/dashboard/:project_id/sign-in', hidden, async (request, reply) => {
    const projectId = request.params.project_id.toLowerCase();
    const project = isUuid(projectId) ? await services.projects.get(projectId) : null;
    const methods = project ? await signIn.methods(projectId) : null;
    if (!project || !methods) return messagePage(reply, 404, NO_PROJECT);
    const intent = methods.telegramBot ? signIn.telegramIntent(projectId) : null;
    if (intent) {
      reply.setCookie(INTENT_COOKIE, intent, cookie(`/dashboard/${encodeURIComponent(projectId)}/telegram/callback`));
      allowTelegramWidget(reply, TELEGRAM_WIDGET);
    }
    return reply.code(200).header('cache-control', 'no-store').type('text/html; charset=utf-8').view('sign-in', {
      title: `Sign in to ${project.name}`,
      base: context.base,
      projectName: project.name,
      projectId,
      notice: (request.query as Record<string, unknown>).signed_out === '1' ? 'You are signed out.' : null,
      discord: methods.discord ? { action: `${signInPath(projectId)}/discord` } : null,
      telegram: intent ? { script: TELEGRAM_WIDGET.script, bot: methods.telegramBot, authUrl: signIn.telegramAuthUrl(projectId) } : null,
      csrf: reply.generateCsrf(),
    });
  });

  app.post<Params>('/dashboard/:project_id/sign-in/discord', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const projectId = request.params.project_id.toLowerCase();
    const started = isUuid(projectId) ? await signIn.startDiscord(projectId) : ({ kind: 'unknown' } as const);
    if (started.kind === 'unknown') return messagePage(reply, 404, NO_PROJECT);
    if (started.kind === 'not-configured') return outcome(reply, { kind: 'refused', projectId, reason: 'not-configured' }, 'discord');
    reply.setCookie(STATE_COOKIE, started.state, cookie('/dashboard/discord/callback'));
    return reply.header('cache-control', 'no-store').redirect(started.url, 303);
  });

  const queryOf = (request: FastifyRequest) => new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));

  app.get('/dashboard/discord/callback', hidden, async (request, reply) => {
    const state = request.cookies[STATE_COOKIE];
    reply.clearCookie(STATE_COOKIE, { path: `${context.base}/dashboard/discord/callback` });
    const o = await signIn.finishDiscord(queryOf(request), state, request.headers['user-agent']);
    if (o.kind !== 'session') request.log.warn({ outcome: o.kind, reason: o.kind === 'refused' ? o.reason : undefined }, 'a dashboard sign-in with Discord was refused');
    return outcome(reply, o, 'discord');
  });

  app.get<Params>('/dashboard/:project_id/telegram/callback', hidden, async (request, reply) => {
    const projectId = request.params.project_id.toLowerCase();
    if (!isUuid(projectId)) return messagePage(reply, 404, NO_PROJECT);
    const o = await signIn.finishTelegram(projectId, queryOf(request), request.cookies[INTENT_COOKIE], request.headers['user-agent']);
    // The reason only: never the query, whose hash is a bearer of the login.
    if (o.kind !== 'session') request.log.warn({ outcome: o.kind, reason: o.kind === 'refused' ? o.reason : undefined }, 'a dashboard sign-in with Telegram was refused');
    return outcome(reply, o, 'telegram');
  });
};
