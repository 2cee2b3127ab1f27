import { Api, GrammyError } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeTelegram, type FakeTelegram } from '../support/fake-telegram.js';

/**
 * The fake Telegram's conversations, proven through grammY's `Api` against the Bot API docs
 * (Message, CallbackQuery, InlineKeyboardMarkup, sendMessage, answerCallbackQuery): what a user says
 * and presses arrives as updates, what the bot sends is recorded with its keyboard, and a user who
 * blocked the bot answers 403 as Telegram does.
 */

let fake: FakeTelegram | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup() {
  const f = (fake = await startFakeTelegram());
  const bot = f.addBot();
  const api = new Api(bot.token, { apiRoot: f.url });
  return { f, bot, api, user: f.addUser({ first_name: 'Ada' }).id };
}

async function failure(call: Promise<unknown>) {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GrammyError);
  const { error_code, description } = error as GrammyError;
  return { error_code, description };
}

describe('fake Telegram: conversations', () => {
  it('a private message is a message update from the user in their own chat, a command with its bot_command entity', async () => {
    const { f, bot, api, user } = await setup();
    f.say(user, bot.id, '/start abc');
    const [update] = await api.getUpdates({ timeout: 0 });
    expect(update!.message).toMatchObject({
      message_id: 1,
      from: { id: user, is_bot: false, first_name: 'Ada' },
      chat: { id: user, type: 'private', first_name: 'Ada' },
      text: '/start abc',
      entities: [{ type: 'bot_command', offset: 0, length: 6 }],
    });
  });

  it('sendMessage records the message with its inline keyboard; a press of its button is a callback_query, answered once', async () => {
    const { f, bot, api, user } = await setup();
    f.say(user, bot.id, 'hi');
    const keyboard = [[{ text: 'Gold', callback_data: 'plan:1' }], [{ text: 'Pay', url: 'https://example.org/pay/x' }]];
    const sent = await api.sendMessage(user, 'Choose', { reply_markup: { inline_keyboard: keyboard } });
    expect(sent).toMatchObject({ message_id: 2, chat: { id: user, type: 'private' }, text: 'Choose', reply_markup: { inline_keyboard: keyboard } });
    expect(f.messages(bot.id, user)).toMatchObject([{ message_id: 2, chat_id: user, text: 'Choose', reply_markup: { inline_keyboard: keyboard } }]);

    const { callback_query_id } = f.press(user, bot.id, user, 2, 'plan:1');
    const updates = await api.getUpdates({ timeout: 0 });
    expect(updates.at(-1)!.callback_query).toMatchObject({ id: callback_query_id, from: { id: user }, message: { message_id: 2, chat: { id: user } }, data: 'plan:1' });
    expect(() => f.press(user, bot.id, user, 2, 'plan:2')).toThrow(/no button/);

    expect(await api.answerCallbackQuery(callback_query_id, { text: 'ok' })).toBe(true);
    expect(f.callbackAnswers(bot.id)).toStrictEqual([{ callback_query_id, text: 'ok', show_alert: false }]);
    expect(await failure(api.answerCallbackQuery(callback_query_id))).toStrictEqual({
      error_code: 400,
      description: 'Bad Request: query is too old and response timeout expired or query ID is invalid',
    });
  });

  it('refuses what Telegram refuses: a user who never wrote, a blocked bot, an unknown chat, empty text, bad buttons', async () => {
    const { f, bot, api, user } = await setup();
    expect(await failure(api.sendMessage(user, 'hi'))).toStrictEqual({ error_code: 403, description: "Forbidden: bot can't initiate conversation with a user" });
    f.say(user, bot.id, '/start');
    f.setBlocked(user, bot.id, true);
    expect(await failure(api.sendMessage(user, 'hi'))).toStrictEqual({ error_code: 403, description: 'Forbidden: bot was blocked by the user' });
    const blocked = (await api.getUpdates({ timeout: 0 })).at(-1)!.my_chat_member;
    expect(blocked).toMatchObject({ chat: { id: user, type: 'private' }, old_chat_member: { status: 'member' }, new_chat_member: { status: 'kicked' } });
    f.setBlocked(user, bot.id, false);
    expect(await api.sendMessage(user, 'welcome back')).toMatchObject({ text: 'welcome back' });

    expect(await failure(api.sendMessage(999_999_999_999, 'hi'))).toStrictEqual({ error_code: 400, description: 'Bad Request: chat not found' });
    expect(await failure(api.sendMessage(user, ' '))).toStrictEqual({ error_code: 400, description: 'Bad Request: message text is empty' });
    expect(await failure(api.sendMessage(user, 'x'.repeat(4097)))).toStrictEqual({ error_code: 400, description: 'Bad Request: message is too long' });
    const long = [[{ text: 'a', callback_data: 'x'.repeat(65) }]];
    expect(await failure(api.sendMessage(user, 'hi', { reply_markup: { inline_keyboard: long } }))).toStrictEqual({ error_code: 400, description: 'Bad Request: BUTTON_DATA_INVALID' });
    const ftp = [[{ text: 'a', url: 'ftp://example.org' }]];
    expect(await failure(api.sendMessage(user, 'hi', { reply_markup: { inline_keyboard: ftp } }))).toStrictEqual({ error_code: 400, description: 'Bad Request: BUTTON_URL_INVALID' });
    expect(f.messages(bot.id, user).map((m) => m.text)).toStrictEqual(['welcome back']);
  });
});
