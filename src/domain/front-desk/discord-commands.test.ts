import { describe, expect, it } from 'vitest';
import { COMMANDS, isAdmin, planButtonId, planIdOf } from './discord-commands.js';

describe('the commands', () => {
  it('are valid for Discord: lower-case names, short descriptions, guild only; the panel for admins', () => {
    for (const c of COMMANDS) {
      expect(c.name).toMatch(/^[-_a-z]{1,32}$/);
      expect(c.description.length).toBeGreaterThan(0);
      expect(c.description.length).toBeLessThanOrEqual(100);
      expect(c.dm_permission).toBe(false);
    }
    expect(COMMANDS.find((c) => c.name === 'subscribe-panel')?.default_member_permissions).toBe('8');
  });

  it('a plan button carries its plan id, and nothing else passes for one', () => {
    const id = '6c0e1b4a-5d2e-4f3a-9b8c-7d6e5f4a3b2c';
    expect(planIdOf(planButtonId(id))).toBe(id);
    expect(planIdOf('tenure:plan:nope')).toBeNull();
    expect(planIdOf(`other:${id}`)).toBeNull();
  });

  it('an admin has the ADMINISTRATOR bit in the permissions Discord sends', () => {
    expect(isAdmin('8')).toBe(true);
    expect(isAdmin(String((1n << 40n) | 8n))).toBe(true);
    expect(isAdmin('32')).toBe(false);
    expect(isAdmin(undefined)).toBe(false);
    expect(isAdmin('-8')).toBe(false);
  });
});
