/**
 * What a member says to the project's Telegram bot (docs/front-desk.md, "Telegram: the bot
 * conversation"), read from a stored Update without side effects: a command in the bot's private
 * chat, a press of one of its inline buttons, anything else said to it there. The update handler
 * (src/access/telegram/update-handling.ts) hands these to `TelegramConversation`; every other update is
 * access's (src/access/telegram/update-plan.ts).
 *
 * Groups never get pay links: the bot is an admin of the chats it manages, and an admin bot
 * receives every message there (Telegram's privacy mode spares admins nothing), so what is said in
 * a group is dropped before it is stored (`keepsUpdate`) and never answered.
 */

/** The commands the bot answers (the BotFather list in docs/front-desk.md). */
export type TelegramCommand = 'start' | 'status' | 'help';

export type TelegramTalk =
  /** A command in the private chat; `payload` is what follows `/start ` (a pay link's id), else null. */
  | { kind: 'command'; chatId: string; userId: string; command: TelegramCommand; payload: string | null }
  /** A press of an inline button; `chatId` null when the button's message is not in the bot's private chat with the user. */
  | { kind: 'button'; callbackQueryId: string; chatId: string | null; userId: string; data: string }
  /** Anything else said in the private chat (text that is no command of the bot's, a sticker, a photo). */
  | { kind: 'chatter'; chatId: string; userId: string }
  /** Said by a bot, or outside the private chat, or malformed: nothing is answered. */
  | { kind: 'ignored'; reason: string };

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const idOf = (v: unknown): string | null => {
  const id = obj(v)?.id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : null;
};

/** `/name`, `/name@bot_username`, then an optional argument (Telegram's deep links put the start parameter there). */
const COMMAND = /^\/([A-Za-z0-9_]{1,32})(?:@[A-Za-z0-9_]{1,64})?(?:\s+([\s\S]*))?$/;
const ALIASES: Readonly<Record<string, TelegramCommand>> = { start: 'start', subscribe: 'start', status: 'status', memberships: 'status', help: 'help' };

/** The conversation an Update carries, or null when it is none (an access update: chat_member, chat_join_request, my_chat_member). */
export function talkOf(payload: unknown): TelegramTalk | null {
  const update = obj(payload) ?? {};
  const message = obj(update.message);
  if (message) return messageTalk(message);
  const query = obj(update.callback_query);
  if (query) return buttonTalk(query);
  return null;
}

function messageTalk(message: Json): TelegramTalk {
  const chat = obj(message.chat);
  const [chatId, userId] = [idOf(chat), idOf(message.from)];
  if (!chatId || !userId) return { kind: 'ignored', reason: 'a message without its chat or sender' };
  if (obj(message.from)?.is_bot === true) return { kind: 'ignored', reason: 'a message from a bot' };
  if (chat?.type !== 'private') return { kind: 'ignored', reason: 'a message outside the bot’s private chats' };
  const text = typeof message.text === 'string' ? message.text.trim() : '';
  const parsed = COMMAND.exec(text);
  const command = parsed ? ALIASES[parsed[1]!.toLowerCase()] : undefined;
  if (!command) return { kind: 'chatter', chatId, userId };
  const payload = parsed![2]?.trim() || null;
  return { kind: 'command', chatId, userId, command, payload: command === 'start' ? payload : null };
}

function buttonTalk(query: Json): TelegramTalk {
  const userId = idOf(query.from);
  const id = typeof query.id === 'string' && query.id.length > 0 ? query.id : null;
  if (!userId || !id) return { kind: 'ignored', reason: 'a malformed callback_query' };
  const chat = obj(obj(query.message)?.chat);
  const chatId = chat?.type === 'private' ? idOf(chat) : null;
  return { kind: 'button', callbackQueryId: id, chatId, userId, data: typeof query.data === 'string' ? query.data : '' };
}

/**
 * Whether an update is worth storing: every update but what is said in groups and channels (an
 * admin bot hears all of it; nothing there is answered). Used by long polling and the webhook
 * route before they store a batch.
 */
export function keepsUpdate(payload: unknown): boolean {
  const talk = talkOf(payload);
  return talk === null || talk.kind !== 'ignored';
}
