/**
 * Admins' permissions (docs/dashboard.md, "Permissions"): strings `area:action` as the original
 * product spells them (separators mixed: `merchant-accounts`, `settings.integrations`), and `all`,
 * which grants everything. The catalogue is closed: a string tenure does not check is refused when
 * an admin is given it, so a typo cannot pass for a right.
 */

export const ALL_PERMISSIONS = 'all';

export const PERMISSION_CATALOGUE = [
  'admins:read',
  'admins:add',
  'admins:update',
  'admins:delete',
  'ban:read',
  'ban:add',
  'ban:remove',
  'coupons:read',
  'coupons:add',
  'coupons:update',
  'coupons:delete',
  'memberships:read',
  'memberships:update',
  'merchant-accounts:read',
  'payments:read',
  'plans:read',
  'plans:add',
  'plans:update',
  'plans:delete',
  'settings.integrations:write',
  'settings.notifications:read',
  'users:read',
] as const;

export type Permission = (typeof PERMISSION_CATALOGUE)[number];

/** Every string an admin may hold: the catalogue and `all`. */
export const GRANTABLE: readonly string[] = [...PERMISSION_CATALOGUE, ALL_PERMISSIONS];

const KNOWN = new Set(GRANTABLE);

/** The strings of `permissions` that are not grantable, each once, in the order given. */
export function unknownPermissions(permissions: readonly string[]): string[] {
  return [...new Set(permissions.filter((p) => !KNOWN.has(p)))];
}

/** `permissions` without repeats, in the order given. */
export const distinct = (permissions: readonly string[]): string[] => [...new Set(permissions)];

/** Whether an admin holding `held` may do `needed`: `all`, or that exact permission. */
export function allows(held: readonly string[], needed: Permission): boolean {
  return held.includes(ALL_PERMISSIONS) || held.includes(needed);
}
