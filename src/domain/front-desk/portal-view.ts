import { joinStandingOf, type JoinStanding } from '../web/guild-joins.js';
import type { PortalAccessRecord, PortalJoinRecord, PortalMembershipRecord } from './portal-link-statements.js';

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
  /** A Discord server they are not in: their latest rejoin from the portal, where it stands; null when none. */
  join: JoinStanding | null;
  /** A Discord server they are not in, in a project where the portal can add them back (Login with Discord is set up). */
  rejoinable: boolean;
  /** The page offers "Rejoin the Discord server" here (docs/portal.md, "Rejoining the Discord server"). */
  canRejoin: boolean;
}

/** What the page knows of rejoining: whether Login with Discord is set up, and the member's latest rejoin per guild. */
export interface RejoinContext {
  discordJoin: boolean;
  joins: readonly PortalJoinRecord[];
}

const NO_REJOIN: RejoinContext = { discordJoin: false, joins: [] };

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

export function membershipOf(m: PortalMembershipRecord, access: readonly PortalAccessRecord[], rejoin: RejoinContext = NO_REJOIN): PortalMembership {
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
    places: active ? oneRejoinPerGuild(access.map((a) => placeOf(a, rejoin)), access) : [],
  };
}

/** A server's places (the server, a role in it) share one rejoin: the button and the join's words show on the first. */
function oneRejoinPerGuild(places: PortalPlace[], access: readonly PortalAccessRecord[]): PortalPlace[] {
  const seen = new Set<string>();
  return places.map((p, i) => {
    const guild = access[i]!.guildId;
    if (guild === null || !(p.canRejoin || p.join)) return p;
    if (seen.has(guild)) return { ...p, canRejoin: false, join: null };
    seen.add(guild);
    return p;
  });
}

/** Refusals a new try does not mend: the member is banned, or the bot may not add anyone. */
const FOR_GOOD = new Set(['banned', 'bot-cannot-invite']);

function placeOf(a: PortalAccessRecord, rejoin: RejoinContext): PortalPlace {
  const standing = a.state === 'synced' ? 'in' : a.state === 'waiting_for_member' ? 'not-in' : a.state === 'failed' ? 'failed' : 'pending';
  const waiting = standing === 'not-in' && a.platform === 'discord' && a.guildId !== null;
  const latest = waiting ? rejoin.joins.find((j) => j.guildId === a.guildId) : undefined;
  // A join that went through while the member is out again (they left) is history: they may rejoin.
  const found = latest ? joinStandingOf(latest) : null;
  const join = found?.kind === 'joined' ? null : found;
  const rejoinable = waiting && rejoin.discordJoin;
  const canRejoin = rejoinable && join?.kind !== 'joining' && !(join?.kind === 'failed' && FOR_GOOD.has(join.reason));
  return { targetId: a.targetId, name: a.targetName ?? (a.platform === 'discord' ? 'A Discord server' : 'A Telegram chat'), platform: a.platform, standing, join, rejoinable, canRejoin };
}
