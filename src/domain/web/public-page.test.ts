import { describe, expect, it } from 'vitest';
import { blockedOf, CANNOT_BE_BOUGHT } from './plan-readiness.js';
import { buyWayOf, PublicPageService, type PublicPlan, type PublicProject } from './public-page.js';

/** The public plan page's rules on a twin store: how each plan is bought, and the short cache (docs/web.md). */

const ID = '6c0e0b1e-0000-4000-8000-000000000001';
const READY = { discord: 'ok', telegram: 'ok' };
const plan = (platforms: ('discord' | 'telegram')[], access: Partial<PublicPlan['access']> = {}): PublicPlan => ({
  planId: 'p',
  name: 'Gold',
  priceFormatted: '$5.00',
  duration: '1 month',
  recurring: true,
  targets: platforms.map((platform) => ({ name: 'T', kind: platform === 'discord' ? 'role' : 'group', platform })),
  access: { targets: platforms.map((platform) => ({ platform, health: 'ok' })), bots: READY, inviteRefused: false, ...access },
});

describe('public plan page', () => {
  it('buys a Discord plan through Login with Discord when set up, a Telegram-only plan through the bot, else says whom to ask', () => {
    const setUp = { discordLogin: true, telegramBot: 'door_bot' };
    expect(buyWayOf(plan(['discord', 'telegram']), setUp)).toStrictEqual({ kind: 'discord' });
    expect(buyWayOf(plan(['telegram']), setUp)).toStrictEqual({ kind: 'telegram', url: 'https://t.me/door_bot' });
    expect(buyWayOf(plan(['discord']), { discordLogin: false, telegramBot: null }).kind).toBe('none');
    expect(buyWayOf(plan(['telegram']), { discordLogin: true, telegramBot: null }).kind).toBe('none');
    expect(buyWayOf(plan([]), setUp).kind).toBe('none');
  });

  it('offers no way to pay for a plan whose access the bot cannot give now', () => {
    const setUp = { discordLogin: true, telegramBot: 'door_bot' };
    const cannot = { kind: 'none', why: CANNOT_BE_BOUGHT };
    expect(buyWayOf(plan(['discord'], { bots: { discord: null, telegram: 'ok' } }), setUp)).toStrictEqual(cannot);
    expect(buyWayOf(plan(['telegram'], { bots: { discord: 'ok', telegram: 'unhealthy' } }), setUp)).toStrictEqual(cannot);
    expect(buyWayOf(plan(['telegram'], { targets: [{ platform: 'telegram', health: 'unhealthy' }] }), setUp)).toStrictEqual(cannot);
    expect(buyWayOf(plan(['discord'], { inviteRefused: true }), setUp)).toStrictEqual(cannot);
    // Another platform's bot, or a refused invite on a Telegram-only plan, is not this plan's concern.
    expect(buyWayOf(plan(['telegram'], { bots: { discord: null, telegram: 'ok' }, inviteRefused: true }), setUp).kind).toBe('telegram');
    expect(blockedOf({ targets: [], bots: { discord: null, telegram: null }, inviteRefused: false })).toBeNull();
  });

  it('reads a project once per cache period, never keeps an unknown one, and shows bad stored branding as the defaults', async () => {
    let now = 0;
    const reads: string[] = [];
    const project: PublicProject = { projectId: ID, name: 'Owls', plans: [plan(['discord'])], discordLogin: true, telegramBot: null, logoSetting: 'http://x.example/a.png', accentSetting: 'red' };
    const service = new PublicPageService(
      {
        publicProject: async (id) => {
          reads.push(id);
          return id === ID ? project : null;
        },
      },
      { now: () => new Date(now) },
      5_000,
    );
    const view = await service.page(ID.toUpperCase());
    expect(view).toMatchObject({ logoUrl: null, palette: { accent: '#3a36c9' }, plans: [{ buy: { kind: 'discord' } }] });
    now = 4_999;
    await service.page(ID);
    expect(reads).toStrictEqual([ID]);
    now = 5_000;
    await service.page(ID);
    expect(reads).toStrictEqual([ID, ID]);
    const unknown = '6c0e0b1e-0000-4000-8000-000000000002';
    expect(await service.page(unknown)).toBeNull();
    expect(await service.page(unknown)).toBeNull();
    expect(reads.filter((r) => r === unknown)).toHaveLength(2);
    expect(await service.page('not-a-uuid')).toBeNull();
    expect(reads).toHaveLength(4);
  });
});
