import { planButtonId, SUBSCRIBE_BUTTON_ID } from './discord-commands.js';

/**
 * What tenure answers members on Discord: short, friendly, and saying what to do next. Each
 * function returns an interaction response's `data` (Discord's message object, as the callback
 * and the follow-up edit take it). Every reply carrying a pay link is ephemeral: only the member
 * who asked sees it, so nobody else can pay for the wrong account.
 */

/** Discord's EPHEMERAL message flag: only the member who used the command sees the reply. */
export const EPHEMERAL = 64;
/** Discord allows 5 action rows of 5 buttons. */
export const MAX_PLAN_BUTTONS = 25;

/** A plan offered in one guild, with the names of what it grants there. */
export interface PlanOffer {
  planId: string;
  name: string;
  priceFormatted: string;
  duration: string;
  recurring: boolean;
  grants: string[];
}

/** A member's membership as `/memberships` shows it. */
export interface MemberMembership {
  planName: string | null;
  status: 'active' | 'expired';
  endDate: Date;
  /** The provider's subscription status (`active`, `past_due`, `canceled`…), null without one. */
  subscriptionStatus: string | null;
}

export interface Button {
  type: 2;
  style: 1 | 5;
  label: string;
  custom_id?: string;
  url?: string;
}

export interface MessageData {
  content: string;
  flags?: number;
  components?: { type: 1; components: Button[] }[];
}

const rows = (buttons: Button[]): MessageData['components'] => {
  const out: { type: 1; components: Button[] }[] = [];
  for (let i = 0; i < buttons.length; i += 5) out.push({ type: 1, components: buttons.slice(i, i + 5) });
  return out;
};

/** Discord's label limit is 80 characters. */
const label = (text: string): string => (text.length > 80 ? `${text.slice(0, 79)}…` : text);

/** A Discord timestamp: each member sees it in their own time zone. */
const when = (date: Date): string => `<t:${Math.floor(date.getTime() / 1000)}:D>`;

export const ephemeral = (content: string): MessageData => ({ content, flags: EPHEMERAL });

/** `/subscribe` and the panel's button: the plans as buttons. */
export function plansMessage(offers: readonly PlanOffer[]): MessageData {
  if (offers.length === 0) return ephemeral('There is nothing to subscribe to in this server yet. Ask the server team when plans open.');
  const shown = offers.slice(0, MAX_PLAN_BUTTONS);
  return {
    content: 'Pick a plan to see what it gives you and get your own pay link:',
    flags: EPHEMERAL,
    components: rows(shown.map((o) => ({ type: 2, style: 1, label: label(`${o.name} · ${o.priceFormatted}`), custom_id: planButtonId(o.planId) }))),
  };
}

/** A plan button's answer: the summary and a link button to the member's own pay link. */
export function planSummary(offer: PlanOffer, payLinkUrl: string): MessageData {
  const renewal = offer.recurring ? `renews every ${offer.duration} until you cancel` : `for ${offer.duration}, no renewal`;
  const grants = offer.grants.length ? offer.grants.join(', ') : 'access in this server';
  return {
    content:
      `**${offer.name}**: ${offer.priceFormatted}, ${renewal}.\nYou get: ${grants}.\n` +
      'This link is yours alone: pay with it and your access arrives on its own within moments.',
    flags: EPHEMERAL,
    components: rows([{ type: 2, style: 5, label: 'Pay now', url: payLinkUrl }]),
  };
}

/**
 * `/memberships`: the member's memberships, with what happens at their end, and a link button to
 * their portal (payments, billing, cancelling the renewal) when one was made for them.
 */
export function membershipsMessage(memberships: readonly MemberMembership[], portalUrl: string | null = null): MessageData {
  if (memberships.length === 0) return ephemeral('You have no membership here yet. Use /subscribe to see the plans.');
  const lines = memberships.map((m) => {
    const plan = m.planName ?? 'Membership';
    if (m.status === 'expired') return `**${plan}**: ended ${when(m.endDate)}. Use /subscribe to join again.`;
    const renews = m.subscriptionStatus === 'active' || m.subscriptionStatus === 'trialing' || m.subscriptionStatus === 'past_due';
    return `**${plan}**: active until ${when(m.endDate)}, ${renews ? 'renews automatically' : 'does not renew (use /subscribe to extend)'}.`;
  });
  if (!portalUrl) return ephemeral(lines.join('\n'));
  return {
    content: `${lines.join('\n')}\nYour payments and billing are on your own page (the link works once, for 15 minutes).`,
    flags: EPHEMERAL,
    components: rows([{ type: 2, style: 5, label: 'My membership page', url: portalUrl }]),
  };
}

/** `/subscribe-panel`: a lasting message everyone in the channel sees. */
export function panelMessage(): MessageData {
  return {
    content: 'Become a member: press Subscribe to see the plans and get your own pay link.',
    components: rows([{ type: 2, style: 1, label: 'Subscribe', custom_id: SUBSCRIBE_BUTTON_ID }]),
  };
}
