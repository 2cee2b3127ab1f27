import { describe, expect, it } from 'vitest';
import { fail, ok } from '../errors.js';
import type { PlanView } from '../plans/plan.view.js';
import { TelegramConversation, type StoredPayLink, type TelegramConversationPorts } from './telegram-conversation.js';
import { keepsUpdate, talkOf } from './telegram-talk.js';

const NOW = new Date('2030-01-01T00:00:00.000Z');
const PLAN_ID = '6c0e6a4e-8d7f-4a8e-9d64-2f0c1b7f4a10';

const plan = (id: string, platform: 'telegram' | 'discord', name = 'Gold'): PlanView =>
  ({
    plan_id: id,
    plan_name: name,
    plan_price: '9.99',
    plan_currency: 'USD',
    plan_duration: '1 month',
    plan_price_formatted: '$9.99',
    plan_data: { plan_recurring: false, plan_one_time: true },
    plan_targets: [{ platform }],
  }) as PlanView;

/** Twins of the ports: the plans and links given, the links made recorded. */
function twins(o: { plans?: PlanView[]; link?: StoredPayLink | null; refuse?: boolean } = {}) {
  const made: { planId: string; userId: string }[] = [];
  const ports: TelegramConversationPorts = {
    plans: { list: () => Promise.resolve({ items: o.plans ?? [plan(PLAN_ID, 'telegram')], total: 1 }) },
    memberships: { list: () => Promise.resolve({ items: [], total: 0 }) },
    payLinks: {
      create: (_p, input) => {
        made.push(input);
        return Promise.resolve(o.refuse ? fail('CONFLICT', 'User 42 is banned from this project') : ok({ pay_link_id: 'abc', url: 'https://members.example/pay/abc', expires_at: '2030-01-02T00:00:00.000Z' }));
      },
      find: () => Promise.resolve(o.link ?? null),
    },
    portal: { create: () => Promise.resolve(ok({ url: 'https://members.example/portal/t', expires_at: '2030-01-01T00:15:00.000Z' })) },
  };
  return { conversation: new TelegramConversation(ports, { now: () => NOW }), made };
}

const link = (over: Partial<StoredPayLink> = {}): StoredPayLink => ({
  pay_link_id: 'abc',
  url: 'https://members.example/pay/abc',
  expires_at: '2030-01-02T00:00:00.000Z',
  plan_id: PLAN_ID,
  user_id: '42',
  open: true,
  ...over,
});

describe('what a member says to the bot', () => {
  const privately = (text: string, from = 42) => ({ message: { message_id: 1, from: { id: from, is_bot: false }, chat: { id: from, type: 'private' }, date: 1, text } });

  it('reads commands, aliases, a start parameter and a bot mention; anything else is chatter', () => {
    expect(talkOf(privately('/start'))).toStrictEqual({ kind: 'command', chatId: '42', userId: '42', command: 'start', payload: null });
    expect(talkOf(privately('/start abc_DEF-1'))).toMatchObject({ command: 'start', payload: 'abc_DEF-1' });
    expect(talkOf(privately('/memberships@tenure_bot'))).toMatchObject({ command: 'status', payload: null });
    expect(talkOf(privately('hello'))).toStrictEqual({ kind: 'chatter', chatId: '42', userId: '42' });
    expect(talkOf({ chat_member: {} })).toBeNull();
  });

  it('keeps nothing said in a group or by a bot', () => {
    const inGroup = { message: { message_id: 1, from: { id: 42, is_bot: false }, chat: { id: -100, type: 'supergroup' }, date: 1, text: '/start' } };
    const byBot = { message: { ...privately('/start').message, from: { id: 42, is_bot: true } } };
    expect(talkOf(inGroup)).toMatchObject({ kind: 'ignored' });
    expect([keepsUpdate(inGroup), keepsUpdate(byBot), keepsUpdate(privately('hi')), keepsUpdate({ chat_member: {} })]).toStrictEqual([false, false, true, true]);
  });
});

describe('TelegramConversation', () => {
  const button = (data: string, chat: 'private' | 'supergroup' = 'private') =>
    talkOf({ callback_query: { id: 'q1', from: { id: 42, is_bot: false }, message: { message_id: 3, chat: { id: chat === 'private' ? 42 : -100, type: chat } }, data } })!;

  it('a plan button: the query answered, then a pay link made for the user who pressed it', async () => {
    const { conversation, made } = twins();
    const { replies } = await conversation.answer('p', button(`plan:${PLAN_ID}`));
    expect(made).toStrictEqual([{ planId: PLAN_ID, userId: '42' }]);
    expect(replies[0]).toStrictEqual({ method: 'answerCallbackQuery', callbackQueryId: 'q1' });
    expect(replies[1]).toMatchObject({ method: 'sendMessage', chatId: '42', keyboard: [[{ text: 'Pay now', url: 'https://members.example/pay/abc' }]] });
  });

  it('no pay link outside the private chat, for a plan not on offer, or when it cannot be made', async () => {
    const inGroup = twins();
    expect((await inGroup.conversation.answer('p', button(`plan:${PLAN_ID}`, 'supergroup'))).replies).toStrictEqual([
      { method: 'answerCallbackQuery', callbackQueryId: 'q1', text: 'Message me privately and send /start to get your payment link.' },
    ]);
    const discordOnly = twins({ plans: [plan(PLAN_ID, 'discord')] });
    expect((await discordOnly.conversation.answer('p', button(`plan:${PLAN_ID}`))).replies[1]).toMatchObject({ text: expect.stringContaining('not available any more') });
    const banned = twins({ refuse: true });
    const refused = await banned.conversation.answer('p', button(`plan:${PLAN_ID}`));
    expect(refused).toMatchObject({ warn: true, replies: [{ method: 'answerCallbackQuery' }, { text: expect.stringContaining('cannot be bought right now') }] });
    expect([inGroup.made, discordOnly.made]).toStrictEqual([[], []]);
  });

  it('/start {id} shows the link only to its member, while it can be paid', async () => {
    const start = (payload: string, from = '42') => ({ kind: 'command' as const, chatId: from, userId: from, command: 'start' as const, payload });
    const shown = await twins({ link: link() }).conversation.answer('p', start('abc'));
    expect(shown.replies[0]).toMatchObject({ keyboard: [[{ text: 'Pay now', url: 'https://members.example/pay/abc' }]] });
    const refusals = [
      await twins({ link: link() }).conversation.answer('p', start('abc', '43')),
      await twins({ link: link({ open: false }) }).conversation.answer('p', start('abc')),
      await twins({ link: link({ expires_at: NOW.toISOString() }) }).conversation.answer('p', start('abc')),
      await twins({ link: null }).conversation.answer('p', start('abc')),
      await twins({ link: link() }).conversation.answer('p', start('not a link id!')),
    ];
    for (const refused of refusals) {
      expect(refused.replies).toStrictEqual([{ method: 'sendMessage', chatId: expect.any(String), text: 'This payment link has expired or is not yours. Send /start to choose a plan and get a link of your own.' }]);
    }
  });
});
