import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyHelmet from '@fastify/helmet';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify';
import { isUuid } from '../../domain/ids.js';
import type { Services } from '../../services.js';
import { toAppError } from '../errors.js';
import { messagePage, PermissionDenied, type DashboardDeps } from './context.js';
import { directivesOf } from './csp.js';
import { memberPages } from './member.pages.js';
import { membersPages } from './members.pages.js';
import { adminsPages } from './admins.pages.js';
import { overviewPages } from './overview.pages.js';
import { plansPages } from './plans.pages.js';
import { targetsPages } from './plans-targets.pages.js';
import { couponsPages } from './coupons.pages.js';
import { integrationsPages } from './integrations.pages.js';
import { messagesPages } from './messages.pages.js';
import { webhooksPages } from './webhooks.pages.js';
import { sessionsPages } from './sessions.pages.js';
import { moneyAssets, moneyPages } from './money.pages.js';
import { signInAccountsPages } from './sign-in-accounts.pages.js';
import { SESSION_COOKIE, signInPages } from './sign-in.pages.js';

/**
 * The owner's dashboard at /dashboard (docs/dashboard.md): server-rendered HTML (eta, autoEscape),
 * no key, an encapsulated scope of its own like the member pages (src/http/pages): a strict CSP
 * (src/http/dashboard/csp.ts), CSRF on every form (its secret in a cookie scoped to /dashboard/),
 * form bodies, its own error page.
 *
 * Adding a page: write `src/http/dashboard/<area>.pages.ts`, a `FastifyPluginAsync<DashboardDeps>`
 * whose routes are `/dashboard/:project_id/<area>…` with `{ config: { public: true }, schema: { hide:
 * true } }` (POSTs add `preHandler: app.csrfProtection`), a template in templates/, and one line in
 * `signedIn` below. Every route there has `request.dashboardActor` set before its handler; the
 * helpers are in context.ts (requirePermission, can, dashboardPage, seeOther, audit), and an action
 * that asks first (delete, disconnect, rotate) is one `confirmedAction` (confirmed-action.ts).
 */

export interface DashboardOptions {
  services: Services;
  /** TENURE_PUBLIC_URL. */
  publicUrl: string;
  /** The origin of Discord's authorize page (TENURE_DISCORD_API_URL's). */
  discordOrigin: string;
}

const TEMPLATES = fileURLToPath(new URL('./templates/', import.meta.url));
const STYLESHEET = readFileSync(new URL('./dashboard.css', import.meta.url), 'utf8');
const CSRF_ERRORS = new Set(['FST_CSRF_INVALID_TOKEN', 'FST_CSRF_MISSING_SECRET']);
const hidden = { config: { public: true }, schema: { hide: true } };

/** The pages of a signed-in actor: every route here has `request.dashboardActor` (no session: 303 to the project's sign-in page). */
const signedIn: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  const { services, context } = deps;
  app.addHook('onRequest', async (request, reply) => {
    const projectId = (request.params as { project_id?: string }).project_id ?? '';
    if (!isUuid(projectId)) return messagePage(reply, 404, { title: 'No such dashboard', lines: ['There is no project at this address. Check that you opened all of the link.'] });
    const actor = await services.dashboardSessions.resolve(projectId.toLowerCase(), request.cookies[SESSION_COOKIE]);
    if (!actor) return reply.header('cache-control', 'no-store').redirect(`${context.base}/dashboard/${encodeURIComponent(projectId.toLowerCase())}/sign-in`, 303);
    request.dashboardActor = actor;
  });
  // One line per page module.
  await app.register(overviewPages, deps);
  await app.register(plansPages, deps);
  await app.register(targetsPages, deps);
  await app.register(couponsPages, deps);
  await app.register(integrationsPages, deps);
  await app.register(webhooksPages, deps);
  await app.register(messagesPages, deps);
  await app.register(membersPages, deps);
  await app.register(memberPages, deps);
  await app.register(adminsPages, deps);
  await app.register(sessionsPages, deps);
  await app.register(moneyPages, deps);
};

export const dashboardPlugin: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  const base = new URL(publicUrl).pathname.replace(/\/+$/, '');
  const deps: DashboardDeps = { services: options.services, context: { base, secure: publicUrl.startsWith('https:'), publicUrl } };
  const directives = directivesOf(options.discordOrigin);
  app.decorate('dashboardDeps', deps);
  app.decorate('dashboardCsp', directives);
  app.decorateRequest('dashboardActor', null);

  await app.register(fastifyHelmet, { contentSecurityPolicy: { useDefaults: false, directives }, referrerPolicy: { policy: 'no-referrer' } });
  await app.register(fastifyView, { engine: { eta: new Eta({ autoEscape: true }) }, root: TEMPLATES, production: true });
  await app.register(fastifyCookie);
  await app.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'tenure_dashboard_csrf',
    cookieOpts: { path: `${base}/dashboard/`, httpOnly: true, sameSite: 'strict', secure: deps.context.secure },
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16_384 }, (_request, body, done) => {
    // Repeated names (checkboxes) become arrays.
    const fields: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      const had = fields[k];
      fields[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
    }
    done(null, fields);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof PermissionDenied) {
      return messagePage(reply, 403, {
        title: 'Not allowed',
        lines: [`This needs the permission ${error.permission}, which your admin account does not have. Nothing was changed.`, 'Ask the project owner to grant it on the Admins page.'],
        action: request.dashboardActor ? { href: `${base}/dashboard/${request.dashboardActor.projectId}`, label: 'Back to the overview' } : null,
      });
    }
    if (CSRF_ERRORS.has(error.code)) {
      return messagePage(reply, 403, {
        title: 'Please try again',
        lines: ['This form was open too long or came from another site, so nothing was changed. Go back, reload the page, and send it again.'],
      });
    }
    const e = toAppError(error, request);
    if (e.status >= 500) request.log.error({ err: error }, 'a dashboard page failed');
    if (e.status === 429) return messagePage(reply, 429, { title: 'Too many requests', lines: [`Please wait ${e.retryAfter ?? 60} seconds, then reload this page.`] });
    if (e.status >= 500) return messagePage(reply, e.status, { title: 'Something went wrong', lines: ['This is a problem on our side. Nothing more was changed. Please try again in a minute.'] });
    return messagePage(reply, e.status, { title: 'That did not work', lines: ['Please check the address, or go back and try again.'] });
  });

  app.get('/dashboard/assets/dashboard.css', hidden, async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
  );
  await app.register(moneyAssets);
  await app.register(signInPages, deps);
  await app.register(signInAccountsPages, deps);
  await app.register(signedIn, deps);
  // An address under /dashboard that is no page: the dashboard's own 404 page, not the API's envelope.
  await app.register(
    async (scope) => scope.setNotFoundHandler((_request, reply) => messagePage(reply, 404, { title: 'Page not found', lines: ['There is no dashboard page at this address.'], action: { href: `${base}/dashboard`, label: 'About the dashboard' } })),
    { prefix: '/dashboard' },
  );
};

/** The dashboard, on `app` (an encapsulated scope: its parsers, hooks and error page stay its own). */
export async function registerDashboard(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  await app.register(dashboardPlugin, options);
}
