import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyHelmet from '@fastify/helmet';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { PayLinksService } from '../../domain/front-desk/pay-links.service.js';
import type { CheckoutPolicies } from '../../domain/payments/checkout-policies.js';
import type { PortalActions } from '../../domain/front-desk/portal-actions.js';
import type { PortalService } from '../../domain/front-desk/portal.service.js';
import { toAppError } from '../errors.js';
import { payPages } from './pay.pages.js';
import { portalPages } from './portal.pages.js';
import { TELEGRAM_WIDGET, telegramLoginPages } from './telegram-login.pages.js';
import { webPages, type WebPagesOptions } from './web.pages.js';
import { messagePage, type PageContext } from './render.js';

/**
 * The pages members open in a browser (docs/front-desk.md): pay links, their done page and the
 * portal. Outside /v2/projects, with no key (the gate's `public`: limited by address only), and
 * HTML rather than the envelope, errors included. Safe by default: templates escape every value
 * (eta's autoEscape), a strict Content-Security-Policy with no script at all and one stylesheet of
 * our own, no framing, no referrer; the one form (the portal's billing button) carries a CSRF
 * token. Templates and the stylesheet sit beside this file, and the build copies them into dist/.
 */

export interface PagesOptions {
  payLinks: Pick<PayLinksService, 'open' | 'done'>;
  /** The project's policies before payment (setting policies, docs/front-desk.md); absent: none asked. */
  payPolicies?: Pick<CheckoutPolicies, 'ask' | 'confirm'>;
  portal: Pick<PortalService, 'open' | 'billing' | 'enter'>;
  /** The portal's forms (docs/portal.md). */
  portalActions: PortalActions;
  /** TENURE_PUBLIC_URL: its path is the prefix of every link a page makes. */
  publicUrl: string;
  /** The public plan page, Login with Discord and the Telegram Login Widget (docs/web.md). */
  web: Pick<WebPagesOptions, 'pages' | 'login' | 'telegram'>;
  /** The origin of Discord's authorize page (TENURE_DISCORD_API_URL's): the login form's redirect goes there. */
  discordOrigin: string;
}

const TEMPLATES = fileURLToPath(new URL('./templates/', import.meta.url));
const STYLESHEET = readFileSync(new URL('./pages.css', import.meta.url), 'utf8');
/** Where Stripe's customer portal lives: the billing form's redirect goes there (CSP form-action covers redirects). */
const STRIPE_BILLING = 'https://billing.stripe.com';
const CSRF_ERRORS = new Set(['FST_CSRF_INVALID_TOKEN', 'FST_CSRF_MISSING_SECRET']);

export const pagesPlugin: FastifyPluginAsync<PagesOptions> = async (app, options) => {
  const base = new URL(options.publicUrl).pathname.replace(/\/+$/, '');
  const secure = options.publicUrl.startsWith('https:');
  const context: PageContext = { base, secure };

  const directives = {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    // A project's logo (docs/web.md, "Branding"): its setting takes https URLs only, of any host.
    imgSrc: ["'self'", 'https:'],
    // Login with Discord's form redirects to Discord's authorize page, and (past its consent) on to our
    // callback, the buyer's pay link and Stripe's checkout page: the whole chain is held to form-action.
    formAction: ["'self'", STRIPE_BILLING, 'https://checkout.stripe.com', options.discordOrigin],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  };
  await app.register(fastifyHelmet, { contentSecurityPolicy: { useDefaults: false, directives }, referrerPolicy: { policy: 'no-referrer' } });
  // The pages showing the Telegram Login Widget, and only they, let Telegram's script in and its
  // button's frame; the widget's confirmation window, opened from that frame, must keep its opener.
  const telegramWidget = {
    contentSecurityPolicy: { useDefaults: false, directives: { ...directives, scriptSrc: [TELEGRAM_WIDGET.scriptOrigin], frameSrc: [TELEGRAM_WIDGET.frameOrigin] } },
    crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' as const },
  };
  await app.register(fastifyView, { engine: { eta: new Eta({ autoEscape: true }) }, root: TEMPLATES, production: true });
  await app.register(fastifyCookie);
  await app.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'tenure_csrf',
    cookieOpts: { path: `${base}/portal/`, httpOnly: true, sameSite: 'strict', secure },
  });
  // The billing form's body; nothing else here takes one.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (CSRF_ERRORS.has(error.code)) {
      return messagePage(reply, context, 403, {
        title: 'Please try again',
        lines: ['This page was open too long or came from somewhere else. Go back, reload the page, and press the button again.'],
      });
    }
    const e = toAppError(error, request);
    if (e.status >= 500) request.log.error({ err: error }, 'a member page failed');
    if (e.retryAfter !== undefined) reply.header('retry-after', String(e.retryAfter));
    if (e.status === 429) return messagePage(reply, context, 429, { title: 'Too many requests', lines: [`Please wait ${e.retryAfter ?? 60} seconds, then reload this page.`] });
    if (e.status >= 500) return messagePage(reply, context, e.status, { title: 'Something went wrong', lines: ['This is a problem on our side. Please try again in a minute.'] });
    return messagePage(reply, context, e.status, { title: 'That did not work', lines: ['Please check the address, or go back and try again.'] });
  });

  app.get('/assets/pages.css', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
  );
  await app.register(payPages, { payLinks: options.payLinks, ...(options.payPolicies ? { policies: options.payPolicies } : {}), context });
  await app.register(portalPages, { portal: options.portal, actions: options.portalActions, login: options.web.login, context });
  await app.register(webPages, { ...options.web, context, telegramWidget });
  await app.register(telegramLoginPages, { login: options.web.telegram, pages: options.web.pages, context });
};

/** The pages, on `app` (an encapsulated scope: their parsers, hooks and error page stay theirs). */
export async function registerPages(app: FastifyInstance, options: PagesOptions): Promise<void> {
  await app.register(pagesPlugin, options);
}
