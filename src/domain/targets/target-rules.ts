import type { OnExpiry, Platform, TargetKind } from './target.view.js';

/**
 * The value rules of a target (docs/plans-targets.md). The route schema checks the general shape;
 * these add what depends on the platform.
 */

/** Discord snowflakes are digits; Telegram chat ids may be negative, or a public @username. */
export const EXTERNAL_ID_PATTERN = '^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$';

const DISCORD_ID = /^[0-9]{1,20}$/;

/** What each platform has: Discord guilds, their roles and channels; Telegram groups and channels. */
export const KINDS_BY_PLATFORM: Record<Platform, readonly TargetKind[]> = {
  discord: ['guild', 'role', 'channel'],
  telegram: ['group', 'channel'],
};

/** Kinds that can contain other targets (a role or channel's parent). */
export const CONTAINER_KINDS: readonly TargetKind[] = ['guild', 'group'];

/** Why a new target's own fields are refused, or null when they are fine. */
export function targetShapeProblem(input: { platform: Platform; kind: TargetKind; external_id: string }): string | null {
  const kinds = KINDS_BY_PLATFORM[input.platform];
  if (!kinds.includes(input.kind)) return `kind ${input.kind} does not exist on ${input.platform}; use one of: ${kinds.join(', ')}`;
  if (input.platform === 'discord' && !DISCORD_ID.test(input.external_id)) {
    return 'external_id of a discord target must be a snowflake: 1 to 20 digits';
  }
  return null;
}

/** Why `parent` cannot contain a new target on `platform`, or null when it can. */
export function parentProblem(platform: Platform, parent: { platform: Platform; kind: TargetKind }): string | null {
  if (parent.platform !== platform) return `parent_target_id must be a ${platform} target, not a ${parent.platform} one`;
  if (!CONTAINER_KINDS.includes(parent.kind)) return `parent_target_id must be a guild or group, not a ${parent.kind}`;
  return null;
}

/**
 * What losing access does on a target (`on_expiry`, docs/plans-targets.md): the values each
 * platform and kind allows, the first being the default a target without its own value gets.
 * A Discord channel is reached through roles, so tenure manages no access on it: `none` only.
 */
export const ON_EXPIRY_BY_KIND: Record<Platform, Partial<Record<TargetKind, readonly [OnExpiry, ...OnExpiry[]]>>> = {
  discord: { role: ['remove_role', 'none'], guild: ['none', 'kick'], channel: ['none'] },
  telegram: { group: ['kick', 'none'], channel: ['kick', 'none'] },
};

/** The targets tenure grants and revokes itself (they get access rows): every kind but a Discord channel. */
export const MANAGED_KINDS: Record<Platform, readonly TargetKind[]> = {
  discord: ['role', 'guild'],
  telegram: ['group', 'channel'],
};

/** The `on_expiry` a target of this platform and kind gets when it sets none. */
export function defaultOnExpiry(platform: Platform, kind: TargetKind): OnExpiry {
  return ON_EXPIRY_BY_KIND[platform][kind]?.[0] ?? 'none';
}

/** Why `value` cannot be a target's `on_expiry`, or null when it can (null = the kind's default). */
export function onExpiryProblem(platform: Platform, kind: TargetKind, value: OnExpiry | null): string | null {
  if (value === null) return null;
  const allowed = ON_EXPIRY_BY_KIND[platform][kind] ?? ['none'];
  if (allowed.includes(value)) return null;
  return `on_expiry ${value} is not allowed for a ${platform} ${kind}; use one of: ${[...allowed].sort().join(', ')}`;
}
