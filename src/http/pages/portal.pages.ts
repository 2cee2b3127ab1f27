import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { PortalActions } from '../../domain/front-desk/portal-actions.js';
import type { PortalMember, PortalService, Refusal } from '../../domain/front-desk/portal.service.js';
import { PORTAL_SESSION_TTL_MS } from '../../domain/front-desk/portal.service.js';
import { portalActionPages, type PortalActionPagesOptions } from './portal-actions.pages.js';
import { NOTICES, shownPage } from './portal-words.js';
import { messagePage, page, type Message, type PageContext } from './render.js';

/**
 * `GET /portal/{token}` (the member's memberships, payments and invoicing details) and its billing
 * button, `POST /portal/{token}/billing` (CSRF-checked) → Stripe's customer portal; the other forms
 * are portal-actions.pages.ts. docs/portal.md. The browser session the link starts lives in an
 * HTTP-only, same-site cookie scoped to the link's path, so only the page's own forms carry it.
 */

const SESSION_COOKIE = 'tenure_portal';
const ASK_AGAIN = 'Ask the bot for a new link: /memberships on Discord, or /status on Telegram.';
const REFUSED: Record<Refusal['kind'], [number, Message]> = {
  unknown: [404, { title: 'Link not found', lines: ['We could not find this link. Check that you opened all of it.', ASK_AGAIN] }],
  expired: [410, { title: 'This link has expired', lines: ['Links to your memberships work for 15 minutes, and a page opened with one for 30 minutes.', ASK_AGAIN] }],
  used: [410, { title: 'This link has been used', lines: ['For your safety each link opens once, in one browser.', ASK_AGAIN] }],
};

type Params = { Params: { token: string } };

export interface PortalPagesOptions {
  portal: Pick<PortalService, 'open' | 'billing' | 'enter'>;
  actions: PortalActions;
  /** Login with Discord, for "Rejoin the Discord server". */
  login: PortalActionPagesOptions['login'];
  context: PageContext;
}

export const portalPages: FastifyPluginAsync<PortalPagesOptions> = async (app, { portal, actions, login, context }) => {
  const pathOf = (token: string) => `${context.base}/portal/${encodeURIComponent(token)}`;
  const refuse = (reply: FastifyReply, kind: Refusal['kind']) => messagePage(reply, context, ...REFUSED[kind]);
  /** The member the request's session lets in, or the refusal page already sent. */
  const enter = async (token: string, cookie: string | undefined, reply: FastifyReply): Promise<PortalMember | null> => {
    const member = await portal.enter(token, cookie);
    if ('kind' in member) {
      await refuse(reply, member.kind);
      return null;
    }
    return member;
  };

  app.get<Params & { Querystring: { done?: string } }>('/portal/:token', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params;
    const outcome = await portal.open(token, request.cookies[SESSION_COOKIE]);
    if (outcome.kind !== 'page') return refuse(reply, outcome.kind);
    if (outcome.newSession) {
      reply.setCookie(SESSION_COOKIE, outcome.newSession, {
        path: pathOf(token),
        httpOnly: true,
        sameSite: 'strict',
        secure: context.secure,
        maxAge: PORTAL_SESSION_TTL_MS / 1000,
      });
    }
    const notice = Object.hasOwn(NOTICES, request.query.done ?? '') ? NOTICES[request.query.done!] : null;
    return page(reply, context, 200, 'portal', { page: shownPage(outcome.page), csrf: reply.generateCsrf(), path: pathOf(token), notice });
  });

  app.post<Params>('/portal/:token/billing', { config: { public: true }, schema: { hide: true }, preHandler: app.csrfProtection }, async (request, reply) => {
    const { token } = request.params;
    const outcome = await portal.billing(token, request.cookies[SESSION_COOKIE]);
    switch (outcome.kind) {
      case 'redirect':
        if (!/^https:\/\/[^\s]+$/.test(outcome.url) || !URL.canParse(outcome.url)) {
          request.log.error('Stripe gave a billing portal URL that is not https; not redirecting');
          return messagePage(reply, context, 502, { title: 'We could not reach Stripe', lines: ['Please try again in a minute.'] });
        }
        return reply.header('cache-control', 'no-store').redirect(outcome.url, 303);
      case 'no-customer':
        return messagePage(reply, context, 409, { title: 'Nothing to manage yet', lines: ['There is no card or subscription on file for you yet.'], action: { href: pathOf(token), label: 'Back to your memberships' } });
      case 'unavailable':
        return messagePage(reply, context, 503, { title: 'We could not reach Stripe', lines: ['Please try again in a minute.'], action: { href: pathOf(token), label: 'Back to your memberships' } });
      default:
        return refuse(reply, outcome.kind);
    }
  });

  // Anything else under /portal/, a token past the router's 100-character limit on a parameter
  // included (the router falls back here instead of refusing it with JSON): no link of ours.
  app.route({ method: ['GET', 'POST'], url: '/portal/*', config: { public: true }, schema: { hide: true }, handler: async (_request, reply) => refuse(reply, 'unknown') });

  await app.register(portalActionPages, { actions, login, context, enter: (request, reply) => enter((request.params as { token: string }).token, request.cookies[SESSION_COOKIE], reply), pathOf });
};
