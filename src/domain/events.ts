/**
 * The event catalogue (docs/webhooks.md, "Events"). One map shared by the outbox,
 * webhook deliveries and live updates, so a payload cannot drift between them.
 */
import type { MembershipView } from './memberships/membership.view.js';
import type { PaymentView } from './payments/payment.view.js';
import type { PlanView } from './plans/plan.view.js';
import type { Platform, TargetView } from './targets/target.view.js';

export interface EventPayloads {
  'membership.created': { membership: MembershipView };
  'membership.extended': { membership: MembershipView; previous_end_date: string };
  'membership.bulk-extended': { total: number; new_end_date: string };
  'membership.expired': { membership: MembershipView };
  'membership.deleted': { membership: MembershipView };
  /** A reminder before the end (docs/lifecycle.md): `offset` as the settings say it (`3d`), `end_date` the end it is about. */
  'membership.expiring': { membership: MembershipView; offset: string; end_date: string };
  /** A subscription's renewal was cancelled, by any path (the portal, Stripe's own): access stays until `access_until` (docs/lifecycle.md). */
  'membership.renewal-cancelled': { membership: MembershipView; access_until: string };
  /** Sent by `POST …/webhooks/{id}/test` to that one webhook. */
  'webhook.test': { message: string; webhook_id: string };
  // Plans and targets: the API's plan and target objects, as they are after the change
  // (`plan.deleted` and `target.removed`: as they were). docs/plans-targets.md.
  'plan.created': { plan: PlanView };
  'plan.updated': { plan: PlanView };
  'plan.deleted': { plan: PlanView };
  'target.added': { target: TargetView };
  'target.updated': { target: TargetView };
  'target.removed': { target: TargetView };
  // Live-only events of the webhook-deliveries channel (events.live_only = true: never sent to webhooks).
  // Written with the attempt's outcome (DeliveriesStore.completeMany); docs/live-updates.md.
  'webhook.delivery-succeeded': DeliveryOutcome;
  /** Final failures only: `dropped` (an answer that is not retried) or `exhausted` (retries used up). */
  'webhook.delivery-failed': DeliveryOutcome & { reason: 'dropped' | 'exhausted'; error_class: string | null };
  'webhook.endpoint-disabled': { webhook_id: string; reason: 'failing'; disabled_at: string };
  // Bans (docs/api-keys-settings-users.md, "Bans"): a banned member loses access at once (docs/access.md).
  'user.banned': { user_id: string; reason: string | null };
  'user.unbanned': { user_id: string };
  // Access on the platforms (docs/access.md): written by the worker once the platform call is done.
  'access.granted': AccessOutcome;
  'access.revoked': AccessOutcome;
  'access.failed': AccessOutcome & { error: { code: string; message: string } };
  /** A Telegram invite link made for one member (docs/access-telegram.md): hand it to them. */
  'access.invite-created': AccessOutcome & { membership_id: string | null; invite: InviteView };
  // Payments (docs/payments.md): written with the Stripe event that reported them, as the payment is after it.
  'payment.succeeded': { payment: PaymentView };
  'payment.refunded': { payment: PaymentView };
  'payment.disputed': { payment: PaymentView };
  'payment.failed': { payment: PaymentView };
  /**
   * The project's bot could not write to a member (docs/front-desk.md, "Confirmations"): their
   * DMs are closed (Discord 50007) or they blocked the bot (Telegram 403). Once per member and
   * platform until they talk to the bot again.
   */
  'notification.failed': { user_id: string; channel: Platform; reason: string };
}

/** A Telegram invite link for one member, as the API and events show it. */
export interface InviteView {
  target_id: string;
  chat_id: string;
  invite_link: string;
  /** `single_use`: joins at once, one person; `join_request`: the bot approves the member's request. */
  kind: 'single_use' | 'join_request';
  expires_at: string;
  created_at: string;
}

/** One (member, target) whose access changed on the platform. */
export interface AccessOutcome {
  user_id: string;
  target_id: string;
  platform: Platform;
}

/** A webhook delivery's final attempt, as the webhook-deliveries live channel reports it. */
export interface DeliveryOutcome {
  webhook_id: string;
  delivery_id: string;
  /** The event delivered, and its type. */
  event_id: string;
  event_type: string;
  attempt: number;
  /** The receiver's HTTP status; null when no response came. */
  status_code: number | null;
  duration_ms: number;
}

export type EventType = keyof EventPayloads;

/**
 * Every catalogued type once, in the catalogue's order: a type added to EventPayloads and not here,
 * or here and not there, does not compile, so the list (the outbox's check, the live channels'
 * replay filter) cannot drift from the map.
 */
const CATALOGUED = {
  'membership.created': true,
  'membership.extended': true,
  'membership.bulk-extended': true,
  'membership.expired': true,
  'membership.deleted': true,
  'membership.expiring': true,
  'membership.renewal-cancelled': true,
  'webhook.test': true,
  'plan.created': true,
  'plan.updated': true,
  'plan.deleted': true,
  'target.added': true,
  'target.updated': true,
  'target.removed': true,
  'webhook.delivery-succeeded': true,
  'webhook.delivery-failed': true,
  'webhook.endpoint-disabled': true,
  'user.banned': true,
  'user.unbanned': true,
  'access.granted': true,
  'access.revoked': true,
  'access.failed': true,
  'access.invite-created': true,
  'payment.succeeded': true,
  'payment.refunded': true,
  'payment.disputed': true,
  'payment.failed': true,
  'notification.failed': true,
} as const satisfies Record<EventType, true>;

export const EVENT_TYPES: readonly EventType[] = Object.keys(CATALOGUED) as EventType[];

/** The event object as webhooks and live updates carry it. */
export interface TenureEvent<T extends EventType = EventType> {
  event_id: string;
  type: T;
  project_id: string;
  /** Epoch milliseconds. */
  emitted_at: number;
  data: EventPayloads[T];
}
