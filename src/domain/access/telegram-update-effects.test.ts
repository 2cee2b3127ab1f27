import { describe, expect, it } from 'vitest';
import { transactorOver } from '../transactions.js';
import { TelegramUpdateHandling, type TelegramUpdateStatements, type UpdateEffects } from './telegram-update-effects.js';

const T = 'target-1';
const bot = { projectId: 'p', botId: '42' };
const NOW = new Date('2030-01-01T00:00:00Z');
const error = { code: 'not_admin', message: 'the bot is not an admin' };

/** The statements as a twin recording what was written, with the mark's answer given. */
function handling(mark: { generation: number | null; handled: boolean }, joinedGrants = true) {
  const writes: string[] = [];
  const stores: TelegramUpdateStatements = {
    telegramUpdates: {
      markHandled: (_owner, _bot, _now, updateId) => {
        writes.push(`mark ${updateId}`);
        return Promise.resolve(mark);
      },
      memberJoined: (_p, _now, j) => (writes.push(`joined ${j.userId}`), Promise.resolve(joinedGrants)),
      relinkMember: (_p, _now, r) => (writes.push(`relink ${r.userId}`), Promise.resolve()),
      memberLeft: (_p, l) => (writes.push(`left ${l.userId}`), Promise.resolve()),
      healTarget: (_p, _now, targetId) => (writes.push(`healed ${targetId}`), Promise.resolve()),
    },
    telegramInvites: { markLinkUsed: (_p, _now, link) => (writes.push(`link used by ${link.usedBy}`), Promise.resolve()) },
    accessWorker: {
      failTargets: (_p, generation, faults, spared) => {
        writes.push(`fault ${faults.map((f) => f.targetId).join()} gen ${generation} sparing ${spared.join()}`);
        return Promise.resolve({ flagged: faults.map((f) => f.targetId), cascaded: 0 });
      },
    },
  };
  return { writes, handle: (effects: UpdateEffects) => new TelegramUpdateHandling(transactorOver(stores)).handled({ owner: 'w', bot, now: NOW, updateId: 7, effects }) };
}

describe('TelegramUpdateHandling: an update\u2019s effects with its handled mark', () => {
  const intruded: UpdateEffects = {
    link: { inviteLink: 'https://t.me/+x', usedBy: '9', revoked: true },
    joined: { targetId: T, userId: '9' },
    relink: { targetId: T, userId: '5', error },
    targetFault: { targetId: T, error },
  };

  it('writes each effect after the mark, a chat fault after the rows, sparing those the update settled', async () => {
    const { writes, handle } = handling({ generation: 3, handled: true });
    expect(await handle(intruded)).toStrictEqual({ held: true, handled: true, granted: 1 });
    expect(writes).toStrictEqual(['mark 7', 'link used by 9', 'joined 9', 'relink 5', `fault ${T} gen 3 sparing ${T}:9,${T}:5`]);
  });

  it('counts no grant when the join settled nothing new', async () => {
    const { handle } = handling({ generation: 3, handled: true }, false);
    expect(await handle({ joined: { targetId: T, userId: '9' } })).toStrictEqual({ held: true, handled: true, granted: 0 });
  });

  it('writes nothing more for an update handled already, or a lease lost', async () => {
    const again = handling({ generation: 3, handled: false });
    expect(await again.handle(intruded)).toStrictEqual({ held: true, handled: false, granted: 0 });
    expect(again.writes).toStrictEqual(['mark 7']);
    const lost = handling({ generation: null, handled: false });
    expect(await lost.handle(intruded)).toStrictEqual({ held: false, handled: false, granted: 0 });
    expect(lost.writes).toStrictEqual(['mark 7']);
  });

  it('leaves and healing are one statement each', async () => {
    const { writes, handle } = handling({ generation: 1, handled: true });
    await handle({ left: { targetId: T, userId: '5', error } });
    await handle({ targetHealed: { targetId: T } });
    expect(writes).toStrictEqual(['mark 7', 'left 5', 'mark 7', `healed ${T}`]);
  });
});
