import { describe, expect, it } from 'vitest';
import { defaultOnExpiry, EXTERNAL_ID_PATTERN, onExpiryProblem, parentProblem, targetShapeProblem } from './target-rules.js';

describe('target value rules', () => {
  it.each(['1', '123456789012345678', '-1001234567890', '@tenure_news'])('EXTERNAL_ID_PATTERN accepts %s', (id) => {
    expect(new RegExp(EXTERNAL_ID_PATTERN).test(id)).toBe(true);
  });

  it.each(['', 'abc', '1'.repeat(21), '@abc', '@1abc', '12 34', '--1'])('EXTERNAL_ID_PATTERN refuses %j', (id) => {
    expect(new RegExp(EXTERNAL_ID_PATTERN).test(id)).toBe(false);
  });

  it.each([
    ['discord', 'guild', '1', null],
    ['discord', 'role', '1', null],
    ['telegram', 'group', '-100', null],
    ['telegram', 'channel', '@tenure_news', null],
    ['discord', 'group', '1', 'kind group does not exist on discord; use one of: guild, role, channel'],
    ['telegram', 'role', '1', 'kind role does not exist on telegram; use one of: group, channel'],
    ['discord', 'guild', '-1', 'external_id of a discord target must be a snowflake: 1 to 20 digits'],
  ] as const)('%s %s %s → %s', (platform, kind, external_id, problem) => {
    expect(targetShapeProblem({ platform, kind, external_id })).toBe(problem);
  });

  it('wants a parent of the same platform that can contain targets', () => {
    expect(parentProblem('discord', { platform: 'discord', kind: 'guild' })).toBeNull();
    expect(parentProblem('telegram', { platform: 'telegram', kind: 'group' })).toBeNull();
    expect(parentProblem('discord', { platform: 'telegram', kind: 'group' })).toBe('parent_target_id must be a discord target, not a telegram one');
    expect(parentProblem('discord', { platform: 'discord', kind: 'channel' })).toBe('parent_target_id must be a guild or group, not a channel');
  });

  it.each([
    ['discord', 'role', 'remove_role'],
    ['discord', 'guild', 'none'],
    ['discord', 'channel', 'none'],
    ['telegram', 'group', 'kick'],
    ['telegram', 'channel', 'kick'],
  ] as const)('a %s %s defaults to on_expiry %s', (platform, kind, want) => {
    expect(defaultOnExpiry(platform, kind)).toBe(want);
    expect(onExpiryProblem(platform, kind, want)).toBeNull();
    expect(onExpiryProblem(platform, kind, null)).toBeNull();
  });

  it('names the allowed values when a kind does not allow an on_expiry', () => {
    expect(onExpiryProblem('discord', 'role', 'none')).toBeNull();
    expect(onExpiryProblem('discord', 'guild', 'kick')).toBeNull();
    expect(onExpiryProblem('discord', 'role', 'kick')).toBe('on_expiry kick is not allowed for a discord role; use one of: none, remove_role');
    expect(onExpiryProblem('telegram', 'group', 'remove_role')).toBe('on_expiry remove_role is not allowed for a telegram group; use one of: kick, none');
    expect(onExpiryProblem('discord', 'channel', 'kick')).toBe('on_expiry kick is not allowed for a discord channel; use one of: none');
  });
});
