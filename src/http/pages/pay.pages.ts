import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { PayLinksService, Standing } from '../../domain/front-desk/pay-links.service.js';
import { confirmationSentence, type CheckoutPolicies } from '../../domain/payments/checkout-policies.js';
import type { Policies } from '../../domain/settings/settings.catalogue.js';
import type { JoinStanding } from '../../domain/web/guild-joins.js';
import { dateOf, messagePage, page, type Message, type PageContext } from './render.js';

/**
 * `GET /pay/{id}` (to Stripe's checkout page) and `GET /pay/{id}/done` (where the member stands),
 * docs/front-desk.md "Pay links". The only redirect is to the https URL Stripe gave for the link's
 * own session; everything else is a page of ours. A project whose `policies` setting names terms,
 * a privacy policy or a minimum age first shows them (`GET /pay/{id}`: a form with one checkbox,
 * CSRF-checked), and `POST /pay/{id}` records the buyer's confirmation before the session is made.
 */

const ASK_AGAIN = 'Ask the bot for a new link: /subscribe on Discord, or /start on Telegram.';
const UNKNOWN: Message = { title: 'Link not found', lines: ['We could not find this payment link. Check that you opened all of it.', ASK_AGAIN] };
const EXPIRED: Message = { title: 'This link has expired', lines: ['Payment links work for 24 hours, and nothing was charged with this one.', ASK_AGAIN] };
const UNAVAILABLE: Message = { title: 'We could not reach Stripe', lines: ['Nothing was charged. Please try again in a minute.'] };

type Params = { Params: { pay_link_id: string } };

interface PayPagesOptions {
  payLinks: Pick<PayLinksService, 'open' | 'done'>;
  /** The project's policies before payment; absent, none are asked (tests of pages alone). */
  policies?: Pick<CheckoutPolicies, 'ask' | 'confirm'>;
  context: PageContext;
}

export const payPages: FastifyPluginAsync<PayPagesOptions> = async (app, { payLinks, policies, context }) => {
  const hrefOf = (id: string, suffix = '') => `${context.base}/pay/${encodeURIComponent(id)}${suffix}`;
  // The CSRF cookie of the policies form lives under /pay/ only (the portal's under /portal/).
  const policiesPage = (reply: FastifyReply, id: string, p: Policies, missing: boolean) =>
    page(reply, context, missing ? 422 : 200, 'pay-policies', {
      title: 'Before you pay',
      links: [
        ...(p.terms ? [{ href: p.terms.value, label: 'Terms of service' }] : []),
        ...(p.privacy ? [{ href: p.privacy.value, label: 'Privacy policy' }] : []),
      ],
      sentence: confirmationSentence(p),
      missing,
      action: hrefOf(id),
      csrf: reply.generateCsrf({ path: `${context.base}/pay/`, sameSite: 'strict' }),
    });

  app.get<Params>('/pay/:pay_link_id', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const id = request.params.pay_link_id;
    const ask = policies ? await policies.ask(id) : { kind: 'none' as const };
    if (ask.kind === 'ask') return policiesPage(reply, id, ask.policies, false);
    return openLink(request, reply, id);
  });

  app.post<Params & { Body: Record<string, unknown> }>(
    '/pay/:pay_link_id',
    { config: { public: true }, schema: { hide: true }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const id = request.params.pay_link_id;
      const body = request.body ?? {};
      const outcome = policies ? await policies.confirm(id, body.confirm === 'yes') : { kind: 'none' as const };
      if (outcome.kind === 'missing') return policiesPage(reply, id, outcome.policies, true);
      // Confirmed (or nothing to confirm): on to Stripe as a GET would go.
      return openLink(request, reply, id);
    },
  );

  async function openLink(request: FastifyRequest, reply: FastifyReply, id: string) {
    const outcome = await payLinks.open(id);
    switch (outcome.kind) {
      case 'redirect':
        if (!/^https:\/\/[^\s]+$/.test(outcome.url) || !URL.canParse(outcome.url)) {
          request.log.error('Stripe gave a Checkout Session URL that is not https; not redirecting');
          return messagePage(reply, context, 502, UNAVAILABLE);
        }
        return reply.header('cache-control', 'no-store').redirect(outcome.url, 303);
      case 'unknown':
        return messagePage(reply, context, 404, UNKNOWN);
      case 'expired':
        return messagePage(reply, context, 410, EXPIRED);
      case 'used':
        return messagePage(reply, context, 410, {
          title: 'This link has been used',
          lines: ['You have already paid with this link, so it cannot be paid again.'],
          action: { href: hrefOf(id, '/done'), label: 'See your membership' },
        });
      case 'refused': {
        request.log.warn({ reason: outcome.error.message, status: outcome.error.status }, 'a pay link could not make its Checkout Session');
        if (outcome.error.status === 503) return messagePage(reply, context, 503, { ...UNAVAILABLE, action: { href: hrefOf(id), label: 'Try again' } });
        return messagePage(reply, context, 409, {
          title: 'This plan cannot be bought right now',
          lines: ['Nothing was charged. Please let the community team know, or try again later.'],
        });
      }
    }
  }

  app.get<Params>('/pay/:pay_link_id/done', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const id = request.params.pay_link_id;
    const outcome = await payLinks.done(id);
    if (outcome.kind === 'unknown') return messagePage(reply, context, 404, UNKNOWN);
    if (outcome.kind === 'unavailable') {
      return messagePage(reply, context, 503, {
        title: 'We could not check your payment',
        lines: ['Stripe did not answer just now. If you paid, your payment is safe: reload this page in a minute.'],
        action: { href: hrefOf(id, '/done'), label: 'Check again' },
      });
    }
    const [status, message] = standingPage(outcome.standing, hrefOf(id), hrefOf(id, '/done'));
    return messagePage(reply, context, status, message);
  });

  // Anything else under /pay/, an id past the router's 100-character limit on a parameter included
  // (the router falls back here instead of refusing it with JSON): no link of ours, so the same page.
  app.get('/pay/*', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => messagePage(reply, context, 404, UNKNOWN));
};

function standingPage(s: Standing, payHref: string, doneHref: string): [number, Message] {
  switch (s.kind) {
    case 'granted':
      if (s.join) return [200, joinPage(s, s.join, doneHref)];
      return [
        200,
        {
          title: 'You are in!',
          tone: 'good',
          lines: [grantedSentence(s), 'Go back to Discord or Telegram: your access is being set up and appears within a minute.'],
        },
      ];
    case 'paid':
      return [200, { title: 'Payment received', tone: 'good', lines: [`Thank you: we have your payment for ${s.planName}.`, 'Your access is not active yet. If it does not appear soon, please contact the community team.'] }];
    case 'processing':
      return [200, { title: 'Your payment is on its way', lines: [`Your bank is still confirming the payment for ${s.planName}.`, 'You get access as soon as it clears. You can close this page.'] }];
    case 'not-paid':
      if (!s.canPay) return [410, EXPIRED];
      return [200, { title: 'You have not paid yet', lines: [`Nothing was charged for ${s.planName}.`, 'When you are ready, continue to the payment page.'], action: { href: payHref, label: 'Continue to payment' } }];
    case 'lapsed':
      return [410, { title: 'This payment was not finished', lines: ['The payment page closed before payment, and nothing was charged.', ASK_AGAIN] }];
  }
}

/** Paid with Login with Discord: the bot adds the member to the server (docs/web.md, "What the done page tells the member"). */
const INVITE = 'Ask the community team for an invite and join with it: your role is given as soon as you are in.';
const JOIN_FAILED: Record<Extract<JoinStanding, { kind: 'failed' }>['reason'], string[]> = {
  'too-many-guilds': ['Discord says your account is already in as many servers as it allows (100).', 'Leave a server you no longer use, then ask the community team for an invite and join with it: your role is given as soon as you are in.'],
  banned: ['Discord says this account is banned from the server.', 'Please contact the community team: they decide whether you can join.'],
  'bot-cannot-invite': ['The server’s bot is not allowed to add members (it needs the Create Invite permission). Please tell the community team.', INVITE],
  other: ['Discord did not let us add you.', INVITE],
};

/** What the member got: a payment's membership, or a free trial (docs/payments.md, "Trials"), which is charged when it ends. */
function grantedSentence(s: { planName: string; endDate: string; trial?: boolean }): string {
  if (s.trial) return `Your free trial of ${s.planName} is active until ${dateOf(s.endDate)}. You are charged when it ends, unless you cancel the renewal before.`;
  return `Thank you for your payment. Your ${s.planName} membership is active until ${dateOf(s.endDate)}.`;
}

function joinPage(s: { planName: string; endDate: string; trial?: boolean }, join: JoinStanding, doneHref: string): Message {
  const paid = grantedSentence(s);
  switch (join.kind) {
    case 'joining':
      return { title: 'You are in!', tone: 'good', lines: [paid, 'We are adding you to the Discord server now. Reload this page in a few seconds to see it done.'], action: { href: doneHref, label: 'Reload' } };
    case 'joined':
      return { title: 'You are in!', tone: 'good', lines: [paid, 'You are in the Discord server now, and your role arrives within a minute. Go back to Discord.'] };
    case 'failed':
      return { title: 'Paid, but we could not add you to the server', tone: 'bad', lines: [paid, ...JOIN_FAILED[join.reason], 'Your payment is safe and your membership runs: only joining the server is left.'] };
  }
}
