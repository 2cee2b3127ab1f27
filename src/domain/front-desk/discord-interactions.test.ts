import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fail, ok } from '../errors.js';
import { DiscordInteractions, type FrontDeskStatements, type InteractionFollowUps, type PayLinkMaker } from './discord-interactions.js';
import type { MessageData, PlanOffer } from './discord-messages.js';

const pair = generateKeyPairSync('ed25519');
const der = pair.publicKey.export({ format: 'der', type: 'spki' });
const verifyKey = der.subarray(der.length - 32).toString('hex');
const now = new Date('2026-01-12T10:00:00.000Z');
const clock = { now: () => now };
const GOLD: PlanOffer = { planId: '6c0e1b4a-5d2e-4f3a-9b8c-7d6e5f4a3b2c', name: 'Gold', priceFormatted: '$10.00', duration: '1 month', recurring: false, grants: ['VIP'] };

function twin() {
  const seen = new Set<string>();
  const store: FrontDeskStatements = {
    application: async () => ({ applicationId: '42', verifyKey }),
    firstSeen: async (id) => !seen.has(id) && Boolean(seen.add(id)),
    plansInGuild: async (_p, guildId) => (guildId === '7' ? [GOLD] : []),
    membershipsOf: async () => [],
  };
  const edits: { token: string; message: MessageData }[] = [];
  const followUps: InteractionFollowUps = {
    editOriginal: async (_app, token, message) => {
      edits.push({ token, message });
    },
  };
  return { store, edits, followUps };
}

const signedBody = (fields: Record<string, unknown>) => {
  const raw = JSON.stringify({ id: String(Math.random()), token: 'tok', ...fields });
  const ts = String(now.getTime() / 1000);
  return [raw, sign(null, Buffer.from(ts + raw), pair.privateKey).toString('hex'), ts] as const;
};

const press = { type: 3, guild_id: '7', member: { user: { id: '99' }, permissions: '0' }, data: { custom_id: `tenure:plan:${GOLD.planId}` } };

describe('DiscordInteractions', () => {
  it('a plan button: deferred and ephemeral first, then the member’s own pay link in the edit', async () => {
    const { store, edits, followUps } = twin();
    const asked: unknown[] = [];
    const payLinks: PayLinkMaker = {
      create: async (projectId, input) => {
        asked.push({ projectId, ...input });
        return ok({ url: 'https://t.example/pay/x' });
      },
    };
    const answer = await new DiscordInteractions(store, payLinks, followUps, clock).receive('p', ...signedBody(press));
    expect(answer.ok && answer.value.callback).toStrictEqual({ type: 5, data: { content: '', flags: 64 } });
    expect(edits).toHaveLength(0);
    await (answer.ok && answer.value.after!());
    expect(asked).toStrictEqual([{ projectId: 'p', planId: GOLD.planId, userId: '99' }]);
    expect(edits[0]!.message.components![0]!.components[0]!.url).toBe('https://t.example/pay/x');
  });

  it('a pay link refused is said to the member; a failing edit is reported, never thrown', async () => {
    const { store, edits, followUps } = twin();
    const refused: PayLinkMaker = { create: async () => fail('CONFLICT', 'The plan cannot be bought now') };
    const answer = await new DiscordInteractions(store, refused, followUps, clock).receive('p', ...signedBody(press));
    await (answer.ok && answer.value.after!());
    expect(edits[0]!.message).toStrictEqual({ content: 'I could not make your pay link: The plan cannot be bought now', flags: 64 });

    const reported: unknown[] = [];
    const broken: InteractionFollowUps = { editOriginal: async () => Promise.reject(new Error('down')) };
    const again = await new DiscordInteractions(store, refused, broken, clock, (err) => reported.push(err)).receive('p', ...signedBody(press));
    await expect(again.ok && again.value.after!()).resolves.toBeUndefined();
    expect(reported).toHaveLength(1);
  });

  it('a body that is not JSON after a good signature is a 400; no id or token a 400', async () => {
    const { store, followUps } = twin();
    const service = new DiscordInteractions(store, { create: async () => ok({ url: '' }) }, followUps, clock);
    const ts = String(now.getTime() / 1000);
    const raw = 'not json';
    const result = await service.receive('p', raw, sign(null, Buffer.from(ts + raw), pair.privateKey).toString('hex'), ts);
    expect(!result.ok && result.error.code).toBe('BAD_REQUEST');
    const noToken = await service.receive('p', ...signedBody({ type: 2, token: null }));
    expect(!noToken.ok && noToken.error.code).toBe('BAD_REQUEST');
  });
});
