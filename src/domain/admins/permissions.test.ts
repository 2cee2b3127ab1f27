import { describe, expect, it } from 'vitest';
import { allows, distinct, GRANTABLE, unknownPermissions } from './permissions.js';

describe('admin permissions', () => {
  it('`all` allows everything; otherwise only the exact permission', () => {
    expect(allows(['all'], 'memberships:update')).toBe(true);
    expect(allows(['memberships:update'], 'memberships:update')).toBe(true);
    expect(allows(['memberships:read'], 'memberships:update')).toBe(false);
    expect(allows([], 'admins:read')).toBe(false);
  });

  it('names the unknown strings once each, in the order given', () => {
    expect(unknownPermissions(['plans:read', 'plans:fly', 'ALL', 'plans:fly'])).toStrictEqual(['plans:fly', 'ALL']);
    expect(unknownPermissions(GRANTABLE)).toStrictEqual([]);
  });

  it('drops repeats and keeps the order', () => {
    expect(distinct(['b:x', 'a:y', 'b:x'])).toStrictEqual(['b:x', 'a:y']);
  });
});
