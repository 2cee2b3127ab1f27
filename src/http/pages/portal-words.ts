import type { PortalMembership, PortalPlace } from '../../domain/front-desk/portal-view.js';
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

function placeWords(p: PortalPlace): { name: string; platform: string; standing: string; targetId: string; canInvite: boolean } {
  const platform = p.platform === 'discord' ? 'Discord' : 'Telegram';
  const standing = {
    in: 'You are in.',
    pending: 'Being set up: this takes a minute.',
    failed: 'We could not set this up. Please contact the community team.',
    'not-in':
      p.platform === 'telegram'
        ? 'You are not in this chat yet.'
        : 'You are not in this server yet. Join it with the invite link your community shares; your access is given as soon as you are in.',
  }[p.standing];
  return { name: p.name, platform, standing, targetId: p.targetId, canInvite: p.platform === 'telegram' && p.standing === 'not-in' };
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
