import { describe, expect, it } from 'vitest';
import { desiredAccess, grantsAccess, type GrantFacts } from './access-rules.js';

const every: GrantFacts[] = [true, false].flatMap((active) =>
  [true, false].flatMap((enabled) => [true, false].map((banned) => ({ active, enabled, banned }))),
);

describe('access rules: what a member should hold on a target', () => {
  it('granted only while active, on an enabled target, and not banned; revoked in every other case', () => {
    const granted = every.filter(grantsAccess);
    expect(granted).toStrictEqual([{ active: true, enabled: true, banned: false }]);
    for (const f of every) expect(desiredAccess(f)).toBe(granted.includes(f) ? 'granted' : 'revoked');
  });
});
