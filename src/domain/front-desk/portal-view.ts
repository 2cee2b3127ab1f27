import type { PortalAccessRecord, PortalMembershipRecord } from './portal-link-statements.js';

/**
 * What the portal says of a membership (docs/portal.md, "What the page shows"): its state, its
 * renewal, which of the renewal's actions fit, and the places it grants.
 */

export type MembershipState = 'active' | 'grace' | 'cancelling' | 'expired';
export type Renewal = 'renews' | 'not-renewing' | 'one-time' | 'payment-failed';

export interface PortalPlace {
  targetId: string;
  name: string;
  platform: 'discord' | 'telegram';
  /** `in`: the member holds it; `not-in`: waiting for them to join; `pending`: being given; `failed`: the team must fix it. */
  standing: 'in' | 'not-in' | 'pending' | 'failed';
}

export interface PortalMembership {
  id: string;
  planName: string;
  state: MembershipState;
  endDate: string;
  renewal: Renewal;
  canCancel: boolean;
  canResume: boolean;
  places: PortalPlace[];
}

/** Subscription statuses that still bill: a renewal can be cancelled (or resumed) only then. */
const BILLING = new Set(['active', 'trialing', 'past_due']);
/** A failed renewal's statuses: access is kept through the grace period. */
const FAILING = new Set(['past_due', 'unpaid']);

export function membershipOf(m: PortalMembershipRecord, access: readonly PortalAccessRecord[]): PortalMembership {
  const active = m.status === 'active';
  const status = m.subscriptionStatus;
  const billing = m.subscriptionId !== null && status !== null && BILLING.has(status);
  const renewal: Renewal =
    m.subscriptionId === null ? 'one-time' : !billing || m.cancelAtPeriodEnd ? 'not-renewing' : FAILING.has(status ?? '') ? 'payment-failed' : 'renews';
  const state: MembershipState = !active ? 'expired' : status !== null && FAILING.has(status) ? 'grace' : renewal === 'not-renewing' && m.subscriptionId !== null ? 'cancelling' : 'active';
  return {
    id: m.id,
    planName: m.planName ?? 'A plan no longer sold',
    state,
    endDate: m.endDate.toISOString(),
    renewal,
    canCancel: active && billing && !m.cancelAtPeriodEnd,
    canResume: active && billing && m.cancelAtPeriodEnd,
    places: active ? access.map(placeOf) : [],
  };
}

function placeOf(a: PortalAccessRecord): PortalPlace {
  const standing = a.state === 'synced' ? 'in' : a.state === 'waiting_for_member' ? 'not-in' : a.state === 'failed' ? 'failed' : 'pending';
  return { targetId: a.targetId, name: a.targetName ?? (a.platform === 'discord' ? 'A Discord server' : 'A Telegram chat'), platform: a.platform, standing };
}
