import type { MemberPage } from '../../domain/dashboard-members/member-views.js';
import { MAX_DAYS } from '../../domain/dashboard-members/end-dates.js';
import { nameOf, STATUS_LABELS, unreachableText, when } from './members-view.js';

/** A member's page as its template shows it (docs/dashboard-members.md, "A member's page"). */

const ACCESS_STATES: Record<string, { label: string; tone: string }> = {
  synced: { label: 'In sync', tone: 'ok' },
  pending: { label: 'Being applied', tone: 'warn' },
  waiting_for_member: { label: 'Not joined yet', tone: 'warn' },
  failed: { label: 'Failed', tone: 'bad' },
};

const NOTIFICATION_TONES: Record<string, string> = { sent: 'ok', queued: 'warn', held: 'warn', unreachable: 'bad', failed: 'bad' };

export function memberPageView(p: MemberPage) {
  const membership = p.memberships[0] ?? null;
  const name = nameOf({ firstName: p.user.user_name?.first_name ?? null, username: p.user.user_name?.username ?? null });
  return {
    userId: p.user.user_id,
    name: name || p.user.user_id,
    username: p.user.user_name?.username ?? null,
    firstSeen: when(p.user.user_first_seen),
    memberStatus: p.status ? STATUS_LABELS[p.status] : null,
    unreachable: unreachableText(p.user.unreachable.map((u) => ({ platform: u.platform, reason: u.reason }))),
    ban: p.ban ? { since: when(p.ban.bannedAt), reason: p.ban.reason, by: p.ban.bannedBy } : null,
    membership: membership && {
      plan: membership.plan_name ?? (membership.plan_id ? 'a deleted plan' : 'no plan'),
      start: when(membership.membership_start_date),
      end: when(membership.membership_end_date),
      expired: membership.status === 'expired',
      subscription: membership.subscription_id ? `${membership.subscription_id} (${membership.subscription_status ?? 'status unknown'})` : null,
      trialEnds: membership.trial_ends_at ? when(membership.trial_ends_at) : null,
    },
    canCancelRenewal: p.canCancelRenewal,
    maxDays: MAX_DAYS,
    invitable: p.invitable,
    access: p.access.map((a) => ({
      target: a.targetName ?? `a deleted target (${a.targetId})`,
      platform: a.platform === 'discord' ? 'Discord' : 'Telegram',
      kind: a.kind,
      desired: a.desired === 'granted' ? 'Should have it' : 'Should not have it',
      state: ACCESS_STATES[a.state] ?? { label: a.state, tone: '' },
      error: a.lastError ? `${a.lastError.code}: ${a.lastError.message}` : '',
      attempts: a.attempts,
      synced: when(a.syncedAt),
    })),
    payments: {
      total: p.payments.total,
      items: p.payments.items.map((x) => ({ date: when(x.created_at), amount: `${x.amount} ${x.currency}`, status: x.status, tone: x.status === 'succeeded' ? 'ok' : 'bad' })),
    },
    notifications: {
      total: p.notifications.total,
      items: p.notifications.items.map((n) => ({
        kind: n.kind,
        platform: n.platform ?? '',
        state: n.state,
        tone: NOTIFICATION_TONES[n.state] ?? '',
        error: n.last_error ?? '',
        created: when(n.created_at),
        sent: when(n.sent_at),
      })),
    },
  };
}
