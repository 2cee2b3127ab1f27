import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { LiveAudiences, type AudienceStore } from './audiences.js';

/** The store's audience calls, recorded; `rows` stands for the projects that are live audiences. */
function fakeStore() {
  const calls: string[] = [];
  const rows = new Set<string>();
  let failNext = false;
  let release: (() => void) | null = null;
  const store: AudienceStore = {
    holdAudience: async (projectId) => {
      calls.push(`hold ${projectId}`);
      if (failNext) {
        failNext = false;
        throw new Error('database away');
      }
      await new Promise<void>((resolve) => (release = resolve));
      rows.add(projectId);
      return true;
    },
    refreshAudiences: async (projectIds) => {
      calls.push(`refresh ${projectIds.join(',')}`);
      return projectIds.filter((id) => rows.has(id));
    },
  };
  const settle = async () => {
    for (let i = 0; i < 10 && !release; i++) await Promise.resolve();
    release?.();
    release = null;
  };
  return { store, calls, rows, failNextHold: () => (failNext = true), settle };
}

const silent = createLogger('silent');

describe('LiveAudiences', () => {
  it('holds a project once for all its connections, admitting each only once the row is written', async () => {
    const { store, calls, settle } = fakeStore();
    const audiences = new LiveAudiences(store, silent);
    let admitted = 0;
    const first = audiences.join('p', 's1').then(() => admitted++);
    const second = audiences.join('p', 's2').then(() => admitted++);
    await Promise.resolve();
    expect(admitted).toBe(0);
    await settle();
    await Promise.all([first, second]);
    await audiences.join('p', 's3');
    expect(admitted).toBe(2);
    expect(calls).toStrictEqual(['hold p']);
  });

  it('forgets a project when its last connection leaves (twice is harmless), and holds it again for the next', async () => {
    const { store, calls, settle } = fakeStore();
    const audiences = new LiveAudiences(store, silent);
    const joining = audiences.join('p', 's1');
    await settle();
    await joining;
    await audiences.join('p', 's2');
    audiences.leave('p', 's1');
    audiences.leave('p', 's1');
    expect(audiences.projects()).toStrictEqual(['p']);
    audiences.leave('p', 's2');
    expect(audiences.projects()).toStrictEqual([]);
    const again = audiences.join('p', 's3');
    await settle();
    await again;
    expect(calls).toStrictEqual(['hold p', 'hold p']);
  });

  it('refuses the connection when the row cannot be written, and tries again for the next one', async () => {
    const { store, calls, failNextHold, settle } = fakeStore();
    const audiences = new LiveAudiences(store, silent);
    failNextHold();
    await expect(audiences.join('p', 's1')).rejects.toThrow('database away');
    expect(audiences.projects()).toStrictEqual([]);
    const retry = audiences.join('p', 's2');
    await settle();
    await retry;
    expect(calls).toStrictEqual(['hold p', 'hold p']);
  });

  it('a refresh moves on the projects held here and holds again one that lapsed meanwhile', async () => {
    const { store, calls, rows, settle } = fakeStore();
    const audiences = new LiveAudiences(store, silent);
    for (const project of ['p', 'q']) {
      const joining = audiences.join(project, `s-${project}`);
      await settle();
      await joining;
    }
    rows.delete('q');
    const refreshing = audiences.refresh();
    await settle();
    await refreshing;
    expect(calls).toStrictEqual(['hold p', 'hold q', 'refresh p,q', 'hold q']);
    expect(rows.has('q')).toBe(true);
  });
});
