import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { LOGIN_TTL_MS, type DiscordLoginService, type FinishOutcome } from '../../domain/web/discord-login.service.js';
import { CANNOT_BE_BOUGHT } from '../../domain/web/plan-readiness.js';
import type { PublicPageService, PublicPageView } from '../../domain/web/public-page.js';
import type { TelegramLoginService } from '../../domain/web/telegram-login.service.js';
import { isUuid } from '../../domain/ids.js';
import { DOCS_PREFIX } from '../openapi.js';
import { messagePage, page, type Message, type PageContext } from './render.js';
import { leaveTelegramIntent, TELEGRAM_WIDGET } from './telegram-login.pages.js';

/**
 * Members on the web (docs/web.md): `GET /` (what this server is), `GET /p/{project_id}` (the
 * project's plans and a way to buy each), its colours (`/p/{project_id}/brand.css`), and Login with
 * Discord: `POST /auth/discord/start` (a form with a CSRF token) → Discord's consent page →
 * `GET /auth/discord/callback` → 303 to the buyer's own pay link. A member signs in to the portal
 * the same way: `GET /p/{project_id}/portal` → `POST /auth/discord/portal` → Discord → the callback →
 * 303 to their own portal link (docs/portal.md, "Signing in with Discord"). Every redirect goes to a path of
 * ours or to the URL the login service built for Discord's authorize endpoint; no parameter names
 * where to go. With a Telegram bot connected, both pages also show the Telegram Login Widget
 * (telegram-login.pages.ts), under a Content-Security-Policy that lets in its script and frame.
 */

export interface WebPagesOptions {
  pages: Pick<PublicPageService, 'page'>;
  login: Pick<DiscordLoginService, 'start' | 'startPortal' | 'startRejoin' | 'finish'>;
  /** The Telegram Login Widget's `data-auth-url`s (docs/web.md, "Signing in with Telegram"). */
  telegram: Pick<TelegramLoginService, 'authUrl' | 'intent' | 'finish'>;
  context: PageContext;
  /** The security headers of a page showing the widget (pages.plugin.ts). */
  telegramWidget: NonNullable<Parameters<FastifyReply['helmet']>[0]>;
}

/** The browser's half of a login's `state`: HTTP-only, sent back only to the callback's path. */
const LOGIN_COOKIE = 'tenure_login';
const loginCookieOf = (context: PageContext) => ({ path: `${context.base}/auth/discord/`, httpOnly: true, sameSite: 'lax' as const, secure: context.secure });

/** On to Discord's consent page, with this browser's half of the state (the plan page's logins, and the portal's rejoin). */
export function toDiscord(reply: FastifyReply, context: PageContext, started: { url: string; state: string }) {
  reply.setCookie(LOGIN_COOKIE, started.state, { ...loginCookieOf(context), maxAge: LOGIN_TTL_MS / 1000 });
  return reply.header('cache-control', 'no-store').redirect(started.url, 303);
}
const NO_PROJECT: Message = { title: 'Page not found', lines: ['There is no membership page at this address. Check that you opened all of it.'] };
const START_AGAIN = 'Go back to the plans page and press Login with Discord again.';

type ProjectParams = { Params: { project_id: string } };
type StartBody = { Body: { project_id?: unknown; plan_id?: unknown } };
const NOT_SET_UP: Message = { title: 'Login with Discord is not set up', lines: ['Nothing was charged. Please ask the community team for a payment link, or try again later.'] };
const ASK_THE_BOT = 'You can also ask the bot for a link to your memberships: /memberships on Discord, or /status on Telegram.';

export const webPages: FastifyPluginAsync<WebPagesOptions> = async (app, { pages, login, telegram, context, telegramWidget }) => {
  const plansPath = (projectId: string) => `${context.base}/p/${encodeURIComponent(projectId)}`;

  app.get('/', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    page(reply, context, 200, 'web-landing', { title: 'tenure', docsHref: `${context.base}${DOCS_PREFIX}` }),
  );

  app.get<ProjectParams>('/p/:project_id', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const view = await pages.page(request.params.project_id);
    if (!view) return messagePage(reply, context, 404, NO_PROJECT);
    // The CSRF secret's cookie goes only where the form posts.
    const csrf = reply.generateCsrf({ path: `${context.base}/auth/discord/`, sameSite: 'lax' });
    const shownView = shown(view);
    const plans = shownView.plans.map((p) => ({ ...p, telegramAuthUrl: p.buy.kind === 'telegram' ? telegram.authUrl(view.project.projectId, p.planId) : null }));
    if (plans.some((p) => p.telegramAuthUrl !== null)) {
      reply.helmet(telegramWidget);
      // The widget's answer counts only in this browser (docs/web.md, "Signing in with Telegram").
      leaveTelegramIntent(reply, context, view.project.projectId, 'plans', telegram.intent(view.project.projectId, 'plans'));
    }
    return page(reply, context, 200, 'web-plans', {
      ...shownView,
      plans,
      telegramBot: view.project.telegramBot,
      widgetScript: TELEGRAM_WIDGET.script,
      csrf,
      startAction: `${context.base}/auth/discord/start`,
      brandCss: `${plansPath(view.project.projectId)}/brand.css`,
      portalHref: `${plansPath(view.project.projectId)}/portal`,
    });
  });

  // "Already a member? Manage your membership": a button that signs in with Discord, then the portal.
  app.get<ProjectParams>('/p/:project_id/portal', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const view = await pages.page(request.params.project_id);
    if (!view) return messagePage(reply, context, 404, NO_PROJECT);
    const id = view.project.projectId;
    const csrf = reply.generateCsrf({ path: `${context.base}/auth/discord/`, sameSite: 'lax' });
    const telegramBot = view.project.telegramBot;
    if (telegramBot) {
      reply.helmet(telegramWidget);
      leaveTelegramIntent(reply, context, id, 'portal', telegram.intent(id, 'portal'));
    }
    return page(reply, context, 200, 'web-portal-sign-in', {
      telegramBot,
      telegramAuthUrl: telegramBot ? telegram.authUrl(id, null) : null,
      telegramHref: telegramBot ? `https://t.me/${encodeURIComponent(telegramBot)}` : null,
      widgetScript: TELEGRAM_WIDGET.script,
      title: `Your membership: ${view.project.name}`,
      projectName: view.project.name,
      projectId: id,
      logoUrl: view.logoUrl,
      discordLogin: view.project.discordLogin,
      askTheBot: ASK_THE_BOT,
      csrf,
      action: `${context.base}/auth/discord/portal`,
      plansHref: plansPath(id),
      brandCss: `${plansPath(id)}/brand.css`,
    });
  });

  // The accent colour as CSS custom properties: the CSP allows stylesheets of our own only, so no inline style.
  app.get<ProjectParams>('/p/:project_id/brand.css', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const view = await pages.page(request.params.project_id);
    if (!view) return reply.code(404).type('text/css; charset=utf-8').send('');
    const { accent, onAccent, link } = view.palette;
    return reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(`:root { --accent: ${accent}; --on-accent: ${onAccent}; --link: ${link}; }\n`);
  });

  app.post<StartBody>('/auth/discord/start', { config: { public: true }, schema: { hide: true }, preHandler: app.csrfProtection }, async (request, reply) => {
    const { project_id: projectId, plan_id: planId } = request.body ?? {};
    if (typeof projectId !== 'string' || typeof planId !== 'string' || !isUuid(projectId) || !isUuid(planId)) return messagePage(reply, context, 404, NO_PROJECT);
    const started = await login.start(projectId.toLowerCase(), planId.toLowerCase());
    if (started.kind === 'unknown') return messagePage(reply, context, 404, { title: 'Plan not found', lines: ['This plan is no longer offered here.'], action: { href: plansPath(projectId), label: 'See the plans' } });
    if (started.kind === 'not-configured') return messagePage(reply, context, 409, NOT_SET_UP);
    if (started.kind === 'cannot-be-bought') return messagePage(reply, context, 409, { title: 'This plan cannot be bought right now', lines: [CANNOT_BE_BOUGHT], action: { href: plansPath(projectId), label: 'See the plans' } });
    return toDiscord(reply, context, started);
  });

  app.post<StartBody>('/auth/discord/portal', { config: { public: true }, schema: { hide: true }, preHandler: app.csrfProtection }, async (request, reply) => {
    const { project_id: projectId } = request.body ?? {};
    if (typeof projectId !== 'string' || !isUuid(projectId)) return messagePage(reply, context, 404, NO_PROJECT);
    const started = await login.startPortal(projectId.toLowerCase());
    if (started.kind === 'unknown') return messagePage(reply, context, 404, NO_PROJECT);
    if (started.kind === 'not-configured') return messagePage(reply, context, 409, { title: 'Login with Discord is not set up', lines: [ASK_THE_BOT] });
    return toDiscord(reply, context, started);
  });

  app.get('/auth/discord/callback', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
    const outcome = await login.finish(query, request.cookies[LOGIN_COOKIE]);
    // Single use: whatever happened, this browser's state is spent.
    reply.clearCookie(LOGIN_COOKIE, loginCookieOf(context));
    if (outcome.kind === 'pay') return reply.header('cache-control', 'no-store').redirect(`${context.base}/pay/${encodeURIComponent(outcome.payLinkId)}`, 303);
    // The member's own portal link, opened at once by this browser: that open starts its session.
    if (outcome.kind === 'portal') return reply.header('cache-control', 'no-store').redirect(`${context.base}/portal/${encodeURIComponent(outcome.token)}`, 303);
    // A rejoin from the portal: back to it (a new link of the member's), where the join's standing shows.
    if (outcome.kind === 'rejoin') return reply.header('cache-control', 'no-store').redirect(`${context.base}/portal/${encodeURIComponent(outcome.token)}?done=joining`, 303);
    if (outcome.kind === 'wrong-account') {
      request.log.warn({ outcome: outcome.kind }, 'a rejoin from the portal came back with another Discord account');
      return messagePage(reply, context, 403, {
        title: 'This is not the Discord account of your membership',
        lines: [
          'You logged in with another Discord account than the one your membership is for, so nothing was changed.',
          'Log in to Discord with the account you bought with, then press Rejoin the Discord server again. Ask the bot for a new link to your memberships: /memberships on Discord.',
        ],
      });
    }
    if (outcome.kind === 'no-member') {
      const name = (await pages.page(outcome.projectId))?.project.name ?? 'this community';
      return messagePage(reply, context, 404, {
        title: 'No membership found',
        lines: [`We found no membership for this Discord account in ${name}.`, 'If you bought with another Discord account, log in with that one. To join, pick a plan.'],
        action: { href: plansPath(outcome.projectId), label: 'See the plans' },
      });
    }
    if (outcome.kind === 'refused' || outcome.kind === 'unavailable' || outcome.kind === 'no-pay-link') {
      request.log.warn({ outcome: outcome.kind, reason: 'error' in outcome ? outcome.error : outcome.message }, 'a login with Discord did not end in a pay link');
    }
    return loginFailedPage(reply, context, outcome, plansPath);
  });
};

function loginFailedPage(reply: FastifyReply, context: PageContext, o: Exclude<FinishOutcome, { kind: 'pay' | 'portal' | 'no-member' | 'rejoin' | 'wrong-account' }>, plansPath: (id: string) => string) {
  const back = 'projectId' in o ? { href: plansPath(o.projectId), label: 'Back to the plans' } : undefined;
  const [status, message]: [number, Message] = (() => {
    switch (o.kind) {
      case 'forged':
        return [400, { title: 'This login did not start here', lines: ['For your safety, a login with Discord must finish in the browser where it started, within 10 minutes.', START_AGAIN] }] as [number, Message];
      case 'used':
        return [410, { title: 'This login has already been used', lines: ['Each login with Discord works once.', START_AGAIN] }] as [number, Message];
      case 'expired':
        return [410, { title: 'This login has expired', lines: ['A login with Discord must be finished within 10 minutes. Nothing was charged.', START_AGAIN] }] as [number, Message];
      case 'denied':
        return [403, { title: 'You did not allow the login', lines: ['Discord says you pressed Cancel, so we do not know your Discord account and nothing was charged.', 'To buy, log in again and press Authorize: we use your account only to give you your membership and add you to the server.'] }] as [number, Message];
      case 'refused':
        return [502, { title: 'Discord did not accept the login', lines: ['Nothing was charged. Please try again; if it keeps failing, tell the community team.'] }] as [number, Message];
      case 'unavailable':
        return [503, { title: 'We could not reach Discord', lines: ['Nothing was charged. Please try again in a minute.'] }] as [number, Message];
      case 'no-pay-link':
        return [409, { title: 'This plan cannot be bought right now', lines: ['Nothing was charged. Please contact the community team.'] }] as [number, Message];
    }
  })();
  return messagePage(reply, context, status, back ? { ...message, action: back } : message);
}

const KIND: Record<string, string> = { guild: 'server', role: 'role', channel: 'channel', group: 'group' };
const PLATFORM: Record<string, string> = { discord: 'Discord', telegram: 'Telegram' };

/** The page's words for what the service read. */
function shown(v: PublicPageView) {
  return {
    title: v.project.name,
    projectName: v.project.name,
    projectId: v.project.projectId,
    logoUrl: v.logoUrl,
    plans: v.plans.map((p) => ({
      planId: p.planId,
      name: p.name,
      price: p.priceFormatted,
      terms: p.recurring ? `renews every ${p.duration} until you cancel` : `for ${p.duration}, paid once`,
      grants: p.targets.map((t) => `${t.name} (${PLATFORM[t.platform] ?? t.platform} ${KIND[t.kind] ?? t.kind})`),
      buy: p.buy,
    })),
  };
}
