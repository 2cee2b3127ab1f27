import { randomBytes } from 'node:crypto';
import { fail, ok, type Method } from './fake-telegram-methods.js';
import { unixNow, type Bot, type TelegramWorld } from './fake-telegram-model.js';

/**
 * The fake Telegram's conversations: users writing to a bot and pressing its inline buttons, and
 * the bot's sendMessage and answerCallbackQuery, from the Bot API docs (https://core.telegram.org/
 * bots/api: Message, CallbackQuery, InlineKeyboardMarkup, InlineKeyboardButton, sendMessage,
 * answerCallbackQuery, getUpdates) and, where they are silent, the errors the official server
 * passes on (tdlib/telegram-bot-api):
 *
 * - A user's message is a `message` update (Message: message_id, from, chat, date, text, and a
 *   `bot_command` entity for a leading `/command`); in their private chat the chat is the user
 *   (ChatPrivate: id = the user's id). Writing to the bot opens that chat: a bot cannot write first
 *   (403 `Forbidden: bot can't initiate conversation with a user`).
 * - A user who blocked the bot: 403 `Forbidden: bot was blocked by the user` to every sendMessage
 *   in their chat, and the bot gets my_chat_member in the private chat (member → kicked), as
 *   Telegram sends it; unblocking sends kicked → member.
 * - sendMessage (docs): chat_id (empty → 400 `Bad Request: chat_id is empty`; no such chat → 400
 *   `Bad Request: chat not found`; a group the bot is not in → 403 as for the other methods), text
 *   1-4096 characters (400 `Bad Request: message text is empty` / `Bad Request: message is too
 *   long`), reply_markup an InlineKeyboardMarkup: rows of buttons, each with text and exactly one
 *   of url or callback_data; callback_data 1-64 bytes (else 400 `Bad Request: BUTTON_DATA_INVALID`),
 *   url http(s) or tg (else 400 `Bad Request: BUTTON_URL_INVALID`). Returns the Message sent,
 *   recorded per chat.
 * - A press of a callback button of a message the bot sent is a `callback_query` update (id,
 *   from, message, chat_instance, data); only buttons that exist can be pressed.
 * - answerCallbackQuery (docs): callback_query_id, text 0-200 characters, show_alert; a query
 *   answered already, or not the bot's, → 400 `Bad Request: query is too old and response timeout
 *   expired or query ID is invalid`. Answers are recorded.
 */

export interface InlineKeyboardButton {
  text: string;
  url?: string;
  callback_data?: string;
}

/** A message the bot sent, as recorded. */
export interface SentMessage {
  message_id: number;
  chat_id: number;
  text: string;
  reply_markup?: { inline_keyboard: InlineKeyboardButton[][] };
  date: number;
}

export interface CallbackAnswer {
  callback_query_id: string;
  text?: string;
  show_alert: boolean;
}

const QUERY_INVALID = 'Bad Request: query is too old and response timeout expired or query ID is invalid';
const MAX_TEXT = 4096;

export class Conversations {
  /** `${botId}:${userId}` of users who opened a private chat with the bot. */
  private readonly opened = new Set<string>();
  private readonly blocked = new Set<string>();
  /** Per bot and chat: the messages the bot sent. */
  private readonly sent = new Map<string, SentMessage[]>();
  private readonly messageIds = new Map<string, number>();
  /** Callback queries not answered yet: id → the bot they went to. */
  private readonly queries = new Map<string, number>();
  readonly answers = new Map<number, CallbackAnswer[]>();

  constructor(private readonly world: TelegramWorld) {}

  /** The user writes `text` to the bot: in their private chat, or in a group `chatId`. */
  say(userId: number, botId: number, text: string, o: { chatId?: number } = {}): { message_id: number } {
    const bot = this.world.bot(botId);
    const chat = o.chatId === undefined ? this.privateChat(userId) : this.world.chatJson(this.world.chat(o.chatId));
    if (o.chatId === undefined) this.opened.add(`${botId}:${userId}`);
    const message_id = this.nextMessageId(botId, chat.id);
    const command = /^\/\S+/.exec(text);
    this.world.emit(bot, 'message', {
      message_id,
      from: this.world.userJson(userId),
      chat,
      date: unixNow(),
      text,
      ...(command ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
    });
    return { message_id };
  }

  /** The user presses the callback button of the bot's message whose callback_data is `data`. */
  press(userId: number, botId: number, chatId: number, messageId: number, data: string): { callback_query_id: string } {
    const bot = this.world.bot(botId);
    const message = this.messages(botId, chatId).find((m) => m.message_id === messageId);
    const buttons = message?.reply_markup?.inline_keyboard.flat() ?? [];
    if (!message || !buttons.some((b) => b.callback_data === data)) throw new Error(`fake telegram: message ${messageId} in ${chatId} has no button ${data}`);
    const id = randomBytes(8).readBigUInt64BE().toString();
    this.queries.set(id, botId);
    this.world.emit(bot, 'callback_query', {
      id,
      from: this.world.userJson(userId),
      message: { message_id: message.message_id, from: this.world.userJson(botId), chat: this.chatOf(message.chat_id), date: message.date, text: message.text, reply_markup: message.reply_markup },
      chat_instance: String(chatId),
      data,
    });
    return { callback_query_id: id };
  }

  /** The user blocks (or unblocks) the bot: my_chat_member in the private chat, as Telegram sends it. */
  setBlocked(userId: number, botId: number, blocked: boolean): void {
    const key = `${botId}:${userId}`;
    if (this.blocked.has(key) === blocked) return;
    if (blocked) this.blocked.add(key);
    else this.blocked.delete(key);
    const bot = this.world.bot(botId);
    const member = (status: string) => ({ user: this.world.userJson(botId), status, ...(status === 'kicked' ? { until_date: 0 } : {}) });
    this.world.emit(bot, 'my_chat_member', {
      chat: this.privateChat(userId),
      from: this.world.userJson(userId),
      date: unixNow(),
      old_chat_member: member(blocked ? 'member' : 'kicked'),
      new_chat_member: member(blocked ? 'kicked' : 'member'),
    });
  }

  /** The messages the bot sent in a chat (copies). */
  messages(botId: number, chatId: number): SentMessage[] {
    return (this.sent.get(`${botId}:${chatId}`) ?? []).map((m) => structuredClone(m));
  }

  methods(): Record<string, Method> {
    return {
      sendmessage: ({ bot, args }) => {
        const chatText = args.str('chat_id');
        if (!chatText) return fail(400, 'Bad Request: chat_id is empty');
        const chatId = /^-?\d+$/.test(chatText) ? Number(chatText) : NaN;
        const refused = this.mayWrite(bot, chatId);
        if (refused) return refused;
        const text = args.str('text');
        if (!text.trim()) return fail(400, 'Bad Request: message text is empty');
        if ([...text].length > MAX_TEXT) return fail(400, 'Bad Request: message is too long');
        const markup = args.str('reply_markup');
        const keyboard = markup ? inlineKeyboard(markup) : undefined;
        if (typeof keyboard === 'string') return fail(400, `Bad Request: ${keyboard}`);
        const message: SentMessage = { message_id: this.nextMessageId(bot.id, chatId), chat_id: chatId, text, date: unixNow(), ...(keyboard ? { reply_markup: { inline_keyboard: keyboard } } : {}) };
        const key = `${bot.id}:${chatId}`;
        this.sent.set(key, [...(this.sent.get(key) ?? []), message]);
        return ok({ message_id: message.message_id, from: this.world.userJson(bot.id), chat: this.chatOf(chatId), date: message.date, text, ...(message.reply_markup ? { reply_markup: message.reply_markup } : {}) });
      },

      answercallbackquery: ({ bot, args }) => {
        const id = args.str('callback_query_id');
        if (this.queries.get(id) !== bot.id) return fail(400, QUERY_INVALID);
        const text = args.str('text');
        if ([...text].length > 200) return fail(400, 'Bad Request: MESSAGE_TOO_LONG');
        this.queries.delete(id);
        this.answers.set(bot.id, [...(this.answers.get(bot.id) ?? []), { callback_query_id: id, ...(text ? { text } : {}), show_alert: args.bool('show_alert') }]);
        return ok(true);
      },
    };
  }

  /** Why the bot may not write in the chat, or null. */
  private mayWrite(bot: Bot, chatId: number) {
    if (!Number.isSafeInteger(chatId)) return fail(400, 'Bad Request: chat not found');
    if (chatId > 0) {
      const user = this.world.users.get(chatId);
      if (!user || user.isBot) return fail(400, 'Bad Request: chat not found');
      if (this.blocked.has(`${bot.id}:${chatId}`)) return fail(403, 'Forbidden: bot was blocked by the user');
      if (!this.opened.has(`${bot.id}:${chatId}`)) return fail(403, "Forbidden: bot can't initiate conversation with a user");
      return null;
    }
    const chat = this.world.chats.get(chatId);
    if (!chat) return fail(400, 'Bad Request: chat not found');
    const place = this.world.membership(chat, bot.id).status;
    if (place === 'kicked') return fail(403, `Forbidden: bot was kicked from the ${chat.type} chat`);
    if (place === 'left') return fail(403, `Forbidden: bot is not a member of the ${chat.type} chat`);
    return null;
  }

  private privateChat(userId: number) {
    const user = this.world.userJson(userId);
    return { id: user.id, type: 'private', first_name: user.first_name, ...(user.username ? { username: user.username } : {}) };
  }

  private chatOf(chatId: number) {
    return chatId > 0 ? this.privateChat(chatId) : this.world.chatJson(this.world.chat(chatId));
  }

  private nextMessageId(botId: number, chatId: number): number {
    const key = `${botId}:${chatId}`;
    const id = (this.messageIds.get(key) ?? 0) + 1;
    this.messageIds.set(key, id);
    return id;
  }
}

/** An InlineKeyboardMarkup's rows, or the server's error for a malformed one. */
function inlineKeyboard(json: string): InlineKeyboardButton[][] | undefined | string {
  let markup: unknown;
  try {
    markup = JSON.parse(json);
  } catch {
    return "can't parse reply keyboard markup JSON object";
  }
  const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  // Other markups (reply keyboards, remove, force reply) are not modelled: nothing of tenure's sends them.
  if (rows === undefined) return undefined;
  if (!Array.isArray(rows) || !rows.every(Array.isArray)) return 'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays';
  for (const button of rows.flat() as Record<string, unknown>[]) {
    if (typeof button?.text !== 'string' || !button.text) return "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard";
    const kinds = ['url', 'callback_data'].filter((k) => button[k] !== undefined);
    if (kinds.length !== 1) return "can't parse inline keyboard button: InlineKeyboardButton must have exactly one of the optional fields";
    if (button.callback_data !== undefined) {
      const bytes = typeof button.callback_data === 'string' ? Buffer.byteLength(button.callback_data) : 0;
      if (bytes < 1 || bytes > 64) return 'BUTTON_DATA_INVALID';
    }
    if (button.url !== undefined && !(typeof button.url === 'string' && URL.canParse(button.url) && /^(https?|tg):$/.test(new URL(button.url).protocol))) {
      return 'BUTTON_URL_INVALID';
    }
  }
  return rows as InlineKeyboardButton[][];
}
