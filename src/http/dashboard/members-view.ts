import type { MemberStatus } from '../../domain/dashboard-members/member-query.js';
import type { AccessSummary, MemberRow, Unreachable } from '../../domain/dashboard-members/member-views.js';

/** How the members pages write what the read models hold: labels, tones, dates (docs/dashboard-members.md). */

export const STATUS_LABELS: Record<MemberStatus, { label: string; tone: '' | 'ok' | 'warn' | 'bad' }> = {
  active: { label: 'Active', tone: 'ok' },
  in_grace: { label: 'In grace', tone: 'warn' },
  cancelling: { label: 'Cancelling', tone: 'warn' },
  trial: { label: 'Trial', tone: 'ok' },
  expired: { label: 'Expired', tone: '' },
  banned: { label: 'Banned', tone: 'bad' },
};

export const STATUS_CHOICES: { value: string; label: string }[] = [
  { value: '', label: 'Any status' },
  { value: 'active', label: 'Active (any kind)' },
  { value: 'in_grace', label: 'In grace (payment failed)' },
  { value: 'cancelling', label: 'Cancelling (access until end)' },
  { value: 'trial', label: 'Trial' },
  { value: 'expired', label: 'Expired' },
  { value: 'banned', label: 'Banned' },
];

export const SORT_CHOICES: { value: string; label: string }[] = [
  { value: '-created', label: 'Newest first' },
  { value: 'created', label: 'Oldest first' },
  { value: 'end_date', label: 'End date, soonest first' },
  { value: '-end_date', label: 'End date, latest first' },
  { value: 'name', label: 'Name, A to Z' },
  { value: '-name', label: 'Name, Z to A' },
];

export const VIEW_CHOICES: { key: string; label: string }[] = [
  { key: 'expiring_7d', label: 'Expiring in 7 days' },
  { key: 'payment_failed', label: 'Payment failed' },
  { key: 'access_failed', label: 'Access failed' },
  { key: 'not_linked', label: 'Not linked' },
];

const ACCESS_WORDS: Record<AccessSummary['state'], string> = { synced: 'in', pending: 'being applied', waiting_for_member: 'not joined', failed: 'failed' };

const DATE = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hour12: false, timeZone: 'UTC' });

/** `2030-01-02T10:00:00.000Z` → `2030-01-02 10:00 UTC`. */
export function when(iso: string | null): string {
  if (!iso) return '';
  return `${DATE.format(new Date(iso)).replace(',', '')} UTC`;
}

export const nameOf = (m: { firstName: string | null; username: string | null }): string =>
  m.firstName ?? (m.username ? `@${m.username}` : '');

/** A row's access per target, summarised: each target and where it stands; past three, counts. */
export function accessText(access: readonly Omit<AccessSummary, never>[]): { text: string; tone: '' | 'ok' | 'warn' | 'bad' } {
  if (access.length === 0) return { text: 'none', tone: '' };
  const granted = access.filter((a) => a.desired === 'granted');
  const tone = access.some((a) => a.state === 'failed') ? 'bad' : access.some((a) => a.state !== 'synced') ? 'warn' : 'ok';
  const named = (a: AccessSummary) => `${a.targetName ?? 'a deleted target'}: ${a.desired === 'revoked' ? 'being removed' : ACCESS_WORDS[a.state]}`;
  if (access.length <= 3) return { text: access.map(named).join('; '), tone };
  const counts = new Map<string, number>();
  for (const a of granted) counts.set(ACCESS_WORDS[a.state], (counts.get(ACCESS_WORDS[a.state]) ?? 0) + 1);
  return { text: [...counts].map(([word, n]) => `${n} ${word}`).join(', ') || `${access.length} being removed`, tone };
}

const REASONS: Record<string, string> = { dm_closed: 'DMs closed', bot_blocked: 'bot blocked', no_conversation: 'never started the bot' };

export const unreachableText = (u: readonly Unreachable[]): string => u.map((x) => `${x.platform === 'discord' ? 'Discord' : 'Telegram'}: ${REASONS[x.reason] ?? x.reason}`).join('; ');

/** A table row as the template shows it. */
export function rowView(r: MemberRow, href: string) {
  return {
    href,
    userId: r.userId,
    name: nameOf(r),
    username: r.firstName && r.username ? `@${r.username}` : '',
    plan: r.planName ?? (r.planId ? 'a deleted plan' : 'no plan'),
    status: STATUS_LABELS[r.status],
    endDate: when(r.endDate),
    since: when(r.createdAt),
    access: accessText(r.access),
    unreachable: unreachableText(r.unreachable),
  };
}
