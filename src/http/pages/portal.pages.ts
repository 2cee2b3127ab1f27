import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { PortalPage, PortalService } from '../../domain/front-desk/portal.service.js';
import { PORTAL_SESSION_TTL_MS } from '../../domain/front-desk/portal.service.js';
import { dateOf, messagePage, page, type Message, type PageContext } from './render.js';

/**
 * `GET /portal/{token}` (the member's memberships and payments) and its billing button, `POST
 * /portal/{token}/billing` (CSRF-checked) → Stripe's customer portal; docs/front-desk.md "The
 * portal". The browser session the link starts lives in an HTTP-only cookie scoped to the link's path.
 */

const SESSION_COOKIE = 'tenure_portal';
const ASK_AGAIN = 'Ask the bot for a new link: /memberships on Discord, or /status on Telegram.';
const REFUSED: Record<'unknown' | 'expired' | 'used', [number, Message]> = {
  unknown: [404, { title: 'Link not found', lines: ['We could not find this link. Check that you opened all of it.', ASK_AGAIN] }],
  expired: [410, { title: 'This link has expired', lines: ['Links to your memberships work for 15 minutes.', ASK_AGAIN] }],
  used: [410, { title: 'This link has been used', lines: ['For your safety each link opens once, in one browser.', ASK_AGAIN] }],
};

type Params = { Params: { token: string } };

export const portalPages: FastifyPluginAsync<{ portal: Pick<PortalService, 'open' | 'billing'>; context: PageContext }> = async (app, { portal, context }) => {
  const pathOf = (token: string) => `${context.base}/portal/${encodeURIComponent(token)}`;
  const refuse = (reply: FastifyReply, kind: keyof typeof REFUSED) => messagePage(reply, context, ...REFUSED[kind]);

  app.get<Params>('/portal/:token', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
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
    const csrf = reply.generateCsrf();
    return page(reply, context, 200, 'portal', { page: shown(outcome.page), csrf, billingAction: `${pathOf(token)}/billing` });
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
};

const RENEWAL: Record<string, string> = { active: 'Renews automatically', trialing: 'Renews automatically', past_due: 'Payment failed: update your card', canceled: 'Will not renew', unpaid: 'Payment failed' };

/** The page's words for the values the service reads. */
function shown(p: PortalPage) {
  return {
    canManageBilling: p.canManageBilling,
    memberships: p.memberships.map((m) => ({ ...m, endDate: dateOf(m.endDate), renewal: m.renewal === null ? 'One-time payment' : (RENEWAL[m.renewal] ?? m.renewal) })),
    payments: p.payments.map((x) => ({
      date: dateOf(x.date),
      planName: x.planName ?? '-',
      amount: `${x.amount} ${x.currency}`,
      status: { succeeded: 'Paid', refunded: 'Refunded', disputed: 'Disputed', failed: 'Failed' }[x.status] ?? x.status,
    })),
  };
}
