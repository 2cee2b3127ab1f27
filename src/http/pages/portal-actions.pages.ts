import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { PortalActions, RenewalAction } from '../../domain/front-desk/portal-actions.js';
import type { PortalMember } from '../../domain/front-desk/portal.service.js';
import type { DiscordLoginService } from '../../domain/web/discord-login.service.js';
import { renewalSentence } from './portal-words.js';
import { toDiscord } from './web.pages.js';
import { dateOf, messagePage, page, type PageContext } from './render.js';

/**
 * The portal's forms (docs/portal.md): cancelling or resuming a renewal (a confirmation page, then
 * a POST), a Telegram invite, rejoining a Discord server (on to Login with Discord), the invoicing details. Every one works only in the browser session
 * the portal link started (`enter`), every POST carries the page's CSRF token, and a POST that
 * changes something answers 303 back to the portal (reloading never posts twice).
 */

export interface PortalActionPagesOptions {
  actions: PortalActions;
  /** Login with Discord, for "Rejoin the Discord server" (docs/portal.md). */
  login: Pick<DiscordLoginService, 'startRejoin'>;
  context: PageContext;
  /** The member of the request's session, or null when the refusal page was sent. */
  enter: (request: FastifyRequest, reply: FastifyReply) => Promise<PortalMember | null>;
  pathOf: (token: string) => string;
}

type RenewalParams = { Params: { token: string; id: string; action: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RENEWAL_ACTIONS = new Set<string>(['cancel', 'resume']);
const hidden = { config: { public: true }, schema: { hide: true } };

export const portalActionPages: FastifyPluginAsync<PortalActionPagesOptions> = async (app, { actions, login, context, enter, pathOf }) => {
  const back = (token: string) => ({ href: pathOf(token), label: 'Back to your memberships' });
  const gone = (reply: FastifyReply, token: string) =>
    messagePage(reply, context, 404, { title: 'Nothing to change here', lines: ['This membership has no renewal to change now. It may have changed meanwhile.'], action: back(token) });
  const unavailable = (reply: FastifyReply, token: string) =>
    messagePage(reply, context, 503, { title: 'We could not reach Stripe', lines: ['Nothing was changed. Please try again in a minute.'], action: back(token) });

  // The first step: what the change does, and a form to confirm it (no script: the form is the second step).
  app.get<RenewalParams>('/portal/:token/renewal/:id/:action', hidden, async (request, reply) => {
    const { token, id, action } = request.params;
    const member = await enter(request, reply);
    if (!member) return reply;
    if (!UUID.test(id) || !RENEWAL_ACTIONS.has(action)) return gone(reply, token);
    const m = await actions.renewalTarget(member, id, action as RenewalAction);
    if (!m) return gone(reply, token);
    const end = dateOf(m.endDate);
    const cancel = action === 'cancel';
    return page(reply, context, 200, 'portal-confirm', {
      title: cancel ? `Cancel the renewal of ${m.planName}?` : `Resume the renewal of ${m.planName}?`,
      lines: cancel
        ? [`You will not be charged again. You keep your access until ${end}, then it ends.`, 'You can resume the renewal any time before then.']
        : [`You will be charged again on ${end}, as before, and your access goes on.`],
      confirmLabel: cancel ? 'Yes, cancel the renewal' : 'Yes, resume the renewal',
      action: `${pathOf(token)}/renewal/${id}/${action}`,
      csrf: reply.generateCsrf(),
      back: pathOf(token),
      backLabel: cancel ? 'No, keep it' : 'Back',
      now: renewalSentence(m),
    });
  });

  app.post<RenewalParams>('/portal/:token/renewal/:id/:action', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const { token, id, action } = request.params;
    const member = await enter(request, reply);
    if (!member) return reply;
    if (!UUID.test(id) || !RENEWAL_ACTIONS.has(action)) return gone(reply, token);
    const outcome = await actions.setRenewal(member, id, action as RenewalAction);
    if (outcome.kind === 'not-found') return gone(reply, token);
    if (outcome.kind === 'unavailable') return unavailable(reply, token);
    return reply.header('cache-control', 'no-store').redirect(`${pathOf(token)}?done=${action === 'cancel' ? 'cancelled' : 'resumed'}`, 303);
  });

  app.post<{ Params: { token: string; target: string } }>('/portal/:token/telegram-invite/:target', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const { token, target } = request.params;
    const member = await enter(request, reply);
    if (!member) return reply;
    const outcome = UUID.test(target) ? await actions.telegramInvite(member, target) : ({ kind: 'not-found' } as const);
    switch (outcome.kind) {
      case 'link':
        // Telegram's links are https://t.me/…; anything else is not put in a button.
        if (!/^https:\/\/[^\s"<>]+$/.test(outcome.url)) return messagePage(reply, context, 502, { title: 'We could not get your link', lines: ['Please try again in a minute.'], action: back(token) });
        return page(reply, context, 200, 'portal-invite', { chatName: outcome.chatName, url: outcome.url, expires: dateOf(outcome.expiresAt), back: pathOf(token) });
      case 'requested':
        return messagePage(reply, context, 202, {
          title: 'Your invite link is on its way',
          lines: [`We asked for a fresh link to ${outcome.chatName}. Go back and press the button again in a few seconds to see it.`],
          tone: '',
          action: back(token),
        });
      default:
        return messagePage(reply, context, 404, { title: 'No invite needed', lines: ['You are in this chat already, or it is not part of your plan any more.'], action: back(token) });
    }
  });

  // "Rejoin the Discord server": Login with Discord (identify guilds.join) bound to this member and
  // the guild of their access row; the callback queues the join and brings them back to the portal.
  app.post<{ Params: { token: string; target: string } }>('/portal/:token/discord-join/:target', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const { token, target } = request.params;
    const member = await enter(request, reply);
    if (!member) return reply;
    const started = UUID.test(target) ? await login.startRejoin(member.projectId, member.userId, target.toLowerCase()) : ({ kind: 'unknown' } as const);
    if (started.kind === 'redirect') return toDiscord(reply, context, started);
    if (started.kind === 'not-configured') {
      return messagePage(reply, context, 409, { title: 'Login with Discord is not set up', lines: ['Please join with the invite link your community shares; your access is given as soon as you are in.'], action: back(token) });
    }
    return messagePage(reply, context, 404, { title: 'No join needed', lines: ['You are in this server already, or it is not part of your plan any more.'], action: back(token) });
  });

  app.get<{ Params: { token: string } }>('/portal/:token/invoicing', hidden, async (request, reply) => {
    const member = await enter(request, reply);
    if (!member) return reply;
    const current = await actions.invoicingOf(member);
    const a = current.address;
    const values = { name: current.name, company: current.company, vat_id: current.vat_id, line1: a?.line1, line2: a?.line2, city: a?.city, postal_code: a?.postal_code, state: a?.state, country: a?.country };
    return invoicingForm(reply, request.params.token, 200, values, null);
  });

  app.post<{ Params: { token: string }; Body: Record<string, unknown> }>('/portal/:token/invoicing', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const member = await enter(request, reply);
    if (!member) return reply;
    const saved = await actions.saveInvoicing(member, request.body ?? {});
    if (!saved.ok) return invoicingForm(reply, request.params.token, 422, request.body ?? {}, saved.error.message);
    return reply.header('cache-control', 'no-store').redirect(`${pathOf(request.params.token)}?done=invoicing`, 303);
  });

  function invoicingForm(reply: FastifyReply, token: string, status: number, values: Record<string, unknown>, error: string | null) {
    const text = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : '');
    const fields = ['name', 'company', 'vat_id', 'line1', 'line2', 'city', 'postal_code', 'state', 'country'];
    return page(reply, context, status, 'portal-invoicing', {
      values: Object.fromEntries(fields.map((f) => [f, text(f)])),
      error,
      csrf: reply.generateCsrf(),
      action: `${pathOf(token)}/invoicing`,
      back: pathOf(token),
    });
  }
};
