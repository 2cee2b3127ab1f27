import { EVENT_TYPES, type EventType } from '../domain/events.js';

/**
 * Live-update channels (docs/live-updates.md, "Channels and events"): which channel carries which event type. One
 * function decides it for the broadcast and for the replay of a resumed subscription, so the two
 * cannot disagree.
 */

export const CHANNELS = ['memberships', 'plans', 'targets', 'webhook-deliveries', 'access', 'payments'] as const;
export type Channel = (typeof CHANNELS)[number];

export const isChannel = (value: unknown): value is Channel => typeof value === 'string' && (CHANNELS as readonly string[]).includes(value);

/**
 * The channel an event type is broadcast on, or null for none. `webhook.test` is aimed at one
 * webhook receiver and is never broadcast.
 */
export function channelOf(type: string): Channel | null {
  // A ban or unban changes who may be a member (and their access): the memberships channel's business.
  // A member the bot cannot reach (docs/front-desk.md, "Confirmations") is the memberships channel's too.
  if (type.startsWith('membership.') || type.startsWith('user.') || type === 'notification.failed') return 'memberships';
  if (type.startsWith('plan.')) return 'plans';
  if (type.startsWith('target.')) return 'targets';
  if (type.startsWith('webhook.delivery-') || type === 'webhook.endpoint-disabled') return 'webhook-deliveries';
  // What the bot did on Discord or Telegram for a member (docs/access.md).
  if (type.startsWith('access.')) return 'access';
  // Payments recorded from the provider's events (docs/payments.md).
  if (type.startsWith('payment.')) return 'payments';
  return null;
}

/** The catalogued event types a channel carries (the replay's filter). */
export const typesOf = (channel: Channel): EventType[] => EVENT_TYPES.filter((t) => channelOf(t) === channel);
