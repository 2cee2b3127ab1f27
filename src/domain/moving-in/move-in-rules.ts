import { isUuid, USER_ID_PATTERN } from '../ids.js';
import { parseInstant } from '../instant.js';
import { CURRENCY_PATTERN, DURATION_PATTERN, PRICE_PATTERN } from '../plans/plan-rules.js';
import type { NewPlanInput } from '../plans/plans.service.js';
import type { NewTargetInput } from '../targets/targets.service.js';
import { EXTERNAL_ID_PATTERN } from '../targets/target-rules.js';
import { ON_EXPIRY_VALUES, PLATFORMS, TARGET_KINDS, type OnExpiry, type Platform, type TargetKind } from '../targets/target.view.js';

/**
 * The hosted product's objects, as its v2 API shows them, read into what tenure's services take.
 * Each reader answers the input or why the object cannot be brought over; tenure's own additions
 * (a target's on_expiry, a plan's trial_days and reminder_offsets) are carried when present, so a
 * move from one tenure to another keeps them too.
 */

export type Read<T> = { ok: true; value: T } | { ok: false; reason: string };
const yes = <T>(value: T): Read<T> => ({ ok: true, value });
const no = (reason: string): Read<never> => ({ ok: false, reason });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === 'string';
const matches = (pattern: string, v: unknown): v is string => str(v) && new RegExp(pattern).test(v);

/** The source's id of an object (`target_id`, `plan_id`…), or null when it has none. */
export function sourceId(item: unknown, field: string): string | null {
  return isObj(item) && str(item[field]) && item[field] !== '' ? item[field] : null;
}

export interface SourceTarget {
  sourceId: string;
  sourceParentId: string | null;
  input: NewTargetInput;
}

export function readTarget(item: unknown): Read<SourceTarget> {
  if (!isObj(item) || !str(item.target_id)) return no('not a target object (no target_id)');
  const { target_name, platform, kind, external_id, is_enabled, parent_target_id, on_expiry } = item;
  if (!str(target_name) || target_name.trim() === '') return no('target_name is missing');
  if (!PLATFORMS.includes(platform as Platform)) return no(`platform ${String(platform)} is not discord or telegram`);
  if (!TARGET_KINDS.includes(kind as TargetKind)) return no(`kind ${String(kind)} is not guild, group, channel or role`);
  if (!matches(EXTERNAL_ID_PATTERN, external_id)) return no(`external_id ${String(external_id)} is not a platform id`);
  return yes({
    sourceId: item.target_id,
    sourceParentId: str(parent_target_id) ? parent_target_id : null,
    input: {
      target_name,
      platform: platform as Platform,
      kind: kind as TargetKind,
      external_id,
      is_enabled: is_enabled !== false,
      on_expiry: ON_EXPIRY_VALUES.includes(on_expiry as OnExpiry) ? (on_expiry as OnExpiry) : null,
    },
  });
}

/** Targets with each parent before its children (a parent the list lacks is left to the writer to report). */
export function parentsFirst(targets: readonly SourceTarget[]): SourceTarget[] {
  const byId = new Map(targets.map((t) => [t.sourceId, t]));
  const out: SourceTarget[] = [];
  const placed = new Set<string>();
  const place = (t: SourceTarget, seen: Set<string>) => {
    if (placed.has(t.sourceId) || seen.has(t.sourceId)) return;
    seen.add(t.sourceId);
    const parent = t.sourceParentId ? byId.get(t.sourceParentId) : undefined;
    if (parent) place(parent, seen);
    placed.add(t.sourceId);
    out.push(t);
  };
  for (const t of targets) place(t, new Set());
  return out;
}

export interface SourcePlan {
  sourceId: string;
  input: NewPlanInput;
  /** The source ids of the targets the plan grants. */
  targetIds: string[];
}

export function readPlan(item: unknown): Read<SourcePlan> {
  if (!isObj(item) || !str(item.plan_id)) return no('not a plan object (no plan_id)');
  const { plan_name, plan_price, plan_currency, plan_duration, plan_price_formatted, plan_data, plan_targets, trial_days, reminder_offsets } = item;
  if (!isUuid(item.plan_id)) return no(`plan_id ${item.plan_id} is not a UUID`);
  if (!str(plan_name) || plan_name.trim() === '') return no('plan_name is missing');
  if (!matches(PRICE_PATTERN, plan_price)) return no(`plan_price ${String(plan_price)} is not a decimal with at most 2 fraction digits`);
  if (!matches(CURRENCY_PATTERN, plan_currency)) return no(`plan_currency ${String(plan_currency)} is not a 3-letter code`);
  if (!matches(DURATION_PATTERN, plan_duration)) return no(`plan_duration ${String(plan_duration)} is not "N hour|day|week|month|year[s]"`);
  const data = isObj(plan_data) ? plan_data : {};
  const input: NewPlanInput = {
    plan_name,
    plan_price,
    plan_currency,
    plan_duration,
    ...(str(plan_price_formatted) && plan_price_formatted !== '' ? { plan_price_formatted } : {}),
    plan_data: {
      plan_recurring: data.plan_recurring === true,
      plan_one_time: data.plan_one_time !== false,
    },
    ...(typeof trial_days === 'number' ? { trial_days } : {}),
    ...(Array.isArray(reminder_offsets) && reminder_offsets.every(str) ? { reminder_offsets } : {}),
  };
  const targetIds = Array.isArray(plan_targets) ? plan_targets.map((t) => sourceId(t, 'target_id')).filter((id): id is string => id !== null) : [];
  return yes({ sourceId: item.plan_id, input, targetIds });
}

export interface SourceMembership {
  sourceId: string;
  userId: string;
  planId: string | null;
  endDate: Date;
  /** When it began in the source, when that is an instant not after the end. */
  startDate: Date | null;
  userName: { first_name: string | null; username: string | null } | null;
  /** A recurring payment backs it in the source (its Stripe subscription, which does not move). */
  subscriptionId: string | null;
}

export function readMembership(item: unknown): Read<SourceMembership> {
  if (!isObj(item) || !str(item.membership_id)) return no('not a membership object (no membership_id)');
  const { user_id, plan_id, membership_start_date, membership_end_date, user_name, subscription_id } = item;
  if (!matches(USER_ID_PATTERN, user_id)) return no(`user_id ${String(user_id)} is not a string of digits`);
  const endDate = parseInstant(membership_end_date);
  if (!endDate) return no(`membership_end_date ${String(membership_end_date)} is not an instant`);
  const startDate = parseInstant(membership_start_date);
  const name = isObj(user_name)
    ? { first_name: str(user_name.first_name) ? user_name.first_name : null, username: str(user_name.username) ? user_name.username : null }
    : null;
  return yes({
    sourceId: item.membership_id,
    userId: user_id,
    planId: str(plan_id) ? plan_id : null,
    endDate,
    startDate: startDate && startDate.getTime() <= endDate.getTime() ? startDate : null,
    userName: name && (name.first_name !== null || name.username !== null) ? name : null,
    subscriptionId: str(subscription_id) && subscription_id !== '' ? subscription_id : null,
  });
}

export interface SourceUser {
  userId: string;
  banned: boolean;
}

export function readUser(item: unknown): Read<SourceUser> {
  if (!isObj(item) || !matches(USER_ID_PATTERN, item.user_id)) return no('not a user object (no user_id of digits)');
  return yes({ userId: item.user_id, banned: item.is_banned === true });
}

/** JSON with object keys sorted: two settings values are the same when these are. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObj(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
