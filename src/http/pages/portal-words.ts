import type { PortalMembership, PortalPlace } from '../../domain/front-desk/portal-view.js';
import type { JoinStanding } from '../../domain/web/guild-joins.js';
import type { PortalPage } from '../../domain/front-desk/portal.service.js';
import { dateOf } from './render.js';

/** The portal's words for what the service reads (docs/portal.md, "What the page shows"). */

const STATE: Record<PortalMembership['state'], { label: string; tone: string }> = {
  active: { label: 'Active', tone: 'active' },
  grace: { label: 'In grace period', tone: 'grace' },
  cancelling: { label: 'Cancelling', tone: 'grace' },
  expired: { label: 'Expired', tone: 'expired' },
};

/** What the page says after a form did its work (`?done=`): fixed sentences, never the query's text. */
export const NOTICES: Record<string, string> = {
  cancelled: 'Your renewal is cancelled. You keep your access until the end of the period you paid for.',
  resumed: 'Your renewal is back on. Nothing else changes.',
  invoicing: 'Your invoicing details are saved. Stripe gets them when you next open Manage billing.',
  joining: 'Thank you: we are adding you to the Discord server now. Reload this page in a few seconds to see how it went.',
};

export function renewalSentence(m: Pick<PortalMembership, 'state' | 'renewal' | 'endDate'>): string {
  const end = dateOf(m.endDate);
  if (m.state === 'expired') return `Ended on ${end}`;
  switch (m.renewal) {
    case 'one-time':
      return `One-time payment: ends on ${end}`;
    case 'renews':
      return `Renews on ${end}`;
    case 'payment-failed':
      return `The last payment failed: access is kept until ${end} while Stripe tries again. Update your card in Manage billing.`;
    case 'not-renewing':
      return `Ends on ${end}, not renewing`;
  }
}

/** What the page says of a rejoin's outcome (docs/portal.md, "Rejoining the Discord server"). */
const JOIN_WORDS: Record<'joining' | Extract<JoinStanding, { kind: 'failed' }>['reason'], string> = {
  joining: 'We are adding you to this server now. Reload this page in a few seconds.',
  'too-many-guilds': 'We could not add you: your Discord account is in as many servers as Discord allows (100). Leave one, then press Rejoin again.',
  banned: 'We could not add you: your Discord account is banned from this server. Please contact the community team, who decide.',
  'bot-cannot-invite': 'We could not add you: the bot may not add members here (it needs the Create Invite permission). Please tell the community team; meanwhile you can join with an invite link they share.',
  other: 'Discord did not let us add you. Press Rejoin to try again, or join with an invite link your community shares.',
};

function placeWords(p: PortalPlace) {
  const platform = p.platform === 'discord' ? 'Discord' : 'Telegram';
  const standing = {
    in: 'You are in.',
    pending: 'Being set up: this takes a minute.',
    failed: 'We could not set this up. Please contact the community team.',
    'not-in':
      p.platform === 'telegram'
        ? 'You are not in this chat yet.'
        : p.rejoinable || p.join
          ? 'You are not in this server now.'
          : 'You are not in this server yet. Join it with the invite link your community shares; your access is given as soon as you are in.',
  }[p.standing];
  const join = p.join === null ? null : p.join.kind === 'failed' ? JOIN_WORDS[p.join.reason] : p.join.kind === 'joining' ? JOIN_WORDS.joining : null;
  return {
    name: p.name,
    platform,
    standing,
    targetId: p.targetId,
    canInvite: p.platform === 'telegram' && p.standing === 'not-in',
    canRejoin: p.canRejoin,
    join,
    joining: p.join?.kind === 'joining',
  };
}

export function shownMembership(m: PortalMembership) {
  const state = STATE[m.state];
  const label = m.state === 'cancelling' ? `Cancelling: access until ${dateOf(m.endDate)}` : state.label;
  return { id: m.id, planName: m.planName, status: label, tone: state.tone, renewal: renewalSentence(m), canCancel: m.canCancel, canResume: m.canResume, places: m.places.map(placeWords) };
}

export function shownPage(p: PortalPage) {
  const a = p.invoicing.address;
  return {
    canManageBilling: p.canManageBilling,
    memberships: p.memberships.map(shownMembership),
    payments: p.payments.map((x) => ({
      date: dateOf(x.date),
      planName: x.planName ?? '-',
      amount: `${x.amount} ${x.currency}`,
      status: { succeeded: 'Paid', refunded: 'Refunded', disputed: 'Disputed', failed: 'Failed' }[x.status] ?? x.status,
    })),
    invoicing: {
      given: p.invoicing.updated_at !== null,
      lines: [
        p.invoicing.name,
        p.invoicing.company,
        a ? [a.line1, a.line2].filter(Boolean).join(', ') : null,
        a ? [a.postal_code, a.city, a.state, a.country].filter(Boolean).join(' ') : null,
        p.invoicing.vat_id ? `VAT ID ${p.invoicing.vat_id}` : null,
      ].filter((l): l is string => l !== null && l !== ''),
    },
  };
}
