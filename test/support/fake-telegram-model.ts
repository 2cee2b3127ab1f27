import { randomBytes } from 'node:crypto';

/**
 * The fake Telegram's world: bots, users, chats, their members, invite links and join requests,
 * and each bot's queue of updates, with the rules the Bot API documents for them
 * (https://core.telegram.org/bots/api, "docs"; the official server, tdlib/telegram-bot-api, where
 * the docs are silent). See the header of fake-telegram.ts for the sources.
 */

export type ChatType = 'supergroup' | 'channel' | 'group';
export type MemberStatus = 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';
export type UpdateKind = 'chat_member' | 'my_chat_member' | 'chat_join_request' | 'message' | 'callback_query';

export interface Rights {
  can_invite_users: boolean;
  can_restrict_members: boolean;
}

export interface Membership {
  status: MemberStatus;
  /** Banned until (unix seconds), 0 = forever; only for `kicked`. */
  until_date: number;
  rights?: Rights;
  /** The link the member joined through (what `member_limit` counts). */
  viaLink?: string;
}

export interface User {
  id: number;
  first_name: string;
  username?: string;
  isBot: boolean;
}

export interface Update {
  update_id: number;
  /** Epoch ms, for the 24 h the docs keep an unconfirmed update. */
  createdAt: number;
  body: Record<string, unknown>;
}

export interface Webhook {
  url: string;
  secretToken: string;
  maxConnections: number;
  lastErrorDate?: number;
  lastErrorMessage?: string;
}

export interface Bot extends User {
  token: string;
  username: string;
  queue: Update[];
  nextUpdateId: number;
  /** null: the default (every kind but chat_member, message_reaction, message_reaction_count). */
  allowedUpdates: Set<string> | null;
  webhook: Webhook | null;
}

export interface FakeInviteLink {
  invite_link: string;
  chat_id: number;
  /** The bot that created it. */
  creator_id: number;
  name?: string;
  expire_date?: number;
  member_limit?: number;
  creates_join_request: boolean;
  is_revoked: boolean;
  /** Users who joined through it, in order (a user who rejoins appears again). */
  uses: number[];
  /** Users whose join request through it waits. */
  pending: number[];
}

export interface Chat {
  id: number;
  type: ChatType;
  title: string;
  ownerId: number;
  members: Map<number, Membership>;
  links: FakeInviteLink[];
  /** Pending join requests: user id → link and date. */
  requests: Map<number, { link: FakeInviteLink; date: number }>;
}

export type JoinResult =
  | { result: 'joined' }
  | { result: 'requested' }
  | { result: 'refused'; reason: 'expired' | 'revoked' | 'used_up' | 'banned' | 'unknown_link' };

/** Kinds a bot gets unless its `allowed_updates` says otherwise (docs: getUpdates, allowed_updates). */
const NOT_BY_DEFAULT = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);
/** Unconfirmed updates are kept 24 hours (docs: "Getting updates"). */
const UPDATE_LIFETIME_MS = 86_400_000;
const ALL_RIGHTS: Rights = { can_invite_users: true, can_restrict_members: true };
const LEFT: Membership = { status: 'left', until_date: 0 };
/** The administrator rights the fake does not vary (a bot's are granted in full but these two). */
const ADMIN_RIGHTS = { can_manage_chat: true, can_delete_messages: true, can_manage_video_chats: true, can_promote_members: false, can_change_info: true };
const STORY_RIGHTS = { can_post_stories: true, can_edit_stories: true, can_delete_stories: true };

export const unixNow = () => Math.floor(Date.now() / 1000);
export const isIn = (m: Membership) => m.status === 'creator' || m.status === 'administrator' || m.status === 'member' || m.status === 'restricted';
export const isAdmin = (m: Membership) => m.status === 'creator' || m.status === 'administrator';

let lastId = 0;
/** Ids of a plausible size, unique within the process. */
const nextId = (base: number) => base + ++lastId;

export class TelegramWorld {
  readonly users = new Map<number, User>();
  readonly bots = new Map<number, Bot>();
  readonly botsByToken = new Map<string, Bot>();
  readonly chats = new Map<number, Chat>();
  /** Omit `invite_link` from the next join's chat_member updates. */
  omitNextInviteLink = false;

  constructor(private readonly notify: (bot: Bot) => void) {}

  // ---- set-up ------------------------------------------------------------------------------------

  addBot(o: { id?: number; username?: string; first_name?: string } = {}): Bot {
    const id = o.id ?? nextId(7_000_000_000);
    if (this.users.has(id)) throw new Error(`fake telegram: user ${id} exists`);
    const [username, first_name, token] = [o.username ?? `tenure_test_${id}_bot`, o.first_name ?? 'Tenure test bot', newToken(id)];
    // Update ids start from "a certain positive number" (docs: Update): never 1 here.
    const nextUpdateId = 100_000 + Math.floor(Math.random() * 900_000);
    const bot: Bot = { id, first_name, username, isBot: true, token, queue: [], nextUpdateId, allowedUpdates: null, webhook: null };
    this.users.set(id, bot);
    this.bots.set(id, bot);
    this.botsByToken.set(bot.token, bot);
    return bot;
  }

  resetToken(botId: number): string {
    const bot = this.bot(botId);
    this.botsByToken.delete(bot.token);
    bot.token = newToken(bot.id);
    this.botsByToken.set(bot.token, bot);
    return bot.token;
  }

  addUser(o: { id?: number; first_name?: string; username?: string } = {}): User {
    const id = o.id ?? nextId(500_000_000);
    if (id <= 0 || this.users.has(id)) throw new Error(`fake telegram: user id ${id} is taken or not positive`);
    const user: User = { id, first_name: o.first_name ?? `User ${id}`, isBot: false, ...(o.username ? { username: o.username } : {}) };
    this.users.set(id, user);
    return user;
  }

  /** A chat with a new human owner (`setOwner` hands it to another). */
  addChat(o: { type: ChatType; title?: string; id?: number }): Chat {
    const id = o.id ?? (o.type === 'group' ? -nextId(4_000_000_000) : -nextId(1_002_000_000_000));
    if (id >= 0 || this.chats.has(id)) throw new Error(`fake telegram: chat id ${id} is taken or not negative`);
    const owner = this.addUser({ first_name: 'Owner' });
    const chat: Chat = { id, type: o.type, title: o.title ?? `Chat ${id}`, ownerId: owner.id, members: new Map(), links: [], requests: new Map() };
    chat.members.set(owner.id, { status: 'creator', until_date: 0 });
    this.chats.set(id, chat);
    return chat;
  }

  /** Ownership moves; the former owner stays an administrator, as after Telegram's transfer. */
  setOwner(chatId: number, userId: number): void {
    const chat = this.chat(chatId);
    this.user(userId);
    const former = chat.ownerId;
    chat.ownerId = userId;
    this.change(chat, userId, { status: 'creator', until_date: 0 }, former);
    if (former !== userId) this.change(chat, former, { status: 'administrator', until_date: 0, rights: { ...ALL_RIGHTS } }, userId);
  }

  setBot(chatId: number, botId: number, place: 'admin' | 'member' | 'none' | 'kicked', rights: Partial<Rights> = {}): void {
    const chat = this.chat(chatId);
    this.bot(botId);
    const status = ({ admin: 'administrator', member: 'member', none: 'left', kicked: 'kicked' } as const)[place];
    this.change(chat, botId, { status, until_date: 0, ...(place === 'admin' ? { rights: { ...ALL_RIGHTS, ...rights } } : {}) }, chat.ownerId);
  }

  // ---- what people do ----------------------------------------------------------------------------

  /** Opening an invite link (docs: ChatInviteLink, createChatInviteLink; banChatMember for bans). */
  join(userId: number, inviteLink: string): JoinResult {
    this.user(userId);
    const link = [...this.chats.values()].flatMap((c) => c.links).find((l) => l.invite_link === inviteLink);
    if (!link) return { result: 'refused', reason: 'unknown_link' };
    const chat = this.chat(link.chat_id);
    if (link.is_revoked) return { result: 'refused', reason: 'revoked' };
    if (link.expire_date !== undefined && unixNow() >= link.expire_date) return { result: 'refused', reason: 'expired' };
    const current = this.membership(chat, userId);
    if (current.status === 'kicked') return { result: 'refused', reason: 'banned' };
    if (isIn(current)) return { result: 'joined' };
    if (link.creates_join_request) {
      if (!chat.requests.has(userId)) {
        chat.requests.set(userId, { link, date: unixNow() });
        link.pending.push(userId);
        this.emitJoinRequest(chat, userId, link);
      }
      return { result: 'requested' };
    }
    // member_limit: "members of the chat simultaneously after joining the chat via this invite link".
    const through = [...chat.members.values()].filter((m) => isIn(m) && m.viaLink === link.invite_link).length;
    if (link.member_limit !== undefined && through >= link.member_limit) return { result: 'refused', reason: 'used_up' };
    this.admit(chat, userId, link, userId, false);
    return { result: 'joined' };
  }

  /** The user becomes a member through `link` (a join, or an approved request). */
  admit(chat: Chat, userId: number, link: FakeInviteLink, from: number, viaJoinRequest: boolean): void {
    link.uses.push(userId);
    const omit = this.omitNextInviteLink;
    this.omitNextInviteLink = false;
    this.change(chat, userId, { status: 'member', until_date: 0, viaLink: link.invite_link }, from, omit ? undefined : link, viaJoinRequest);
  }

  /** Ends a pending join request (approved, declined, or moot). */
  dropRequest(chat: Chat, userId: number): FakeInviteLink | undefined {
    const request = chat.requests.get(userId);
    if (!request) return undefined;
    chat.requests.delete(userId);
    request.link.pending = request.link.pending.filter((id) => id !== userId);
    return request.link;
  }

  // ---- reading -----------------------------------------------------------------------------------

  chat = (chatId: number): Chat => found(this.chats.get(chatId), `chat ${chatId}`);
  bot = (botId: number): Bot => found(this.bots.get(botId), `bot ${botId}`);
  user = (userId: number): User => found(this.users.get(userId), `user ${userId}`);

  /** The user's membership; a temporary ban ends by itself at its until_date (docs: banChatMember). */
  membership(chat: Chat, userId: number): Membership {
    const m = chat.members.get(userId);
    if (!m) return LEFT;
    if (m.status === 'kicked' && m.until_date !== 0 && unixNow() >= m.until_date) {
      chat.members.delete(userId);
      return LEFT;
    }
    return m;
  }

  // ---- changes and their updates -----------------------------------------------------------------

  /**
   * Sets a membership and tells the bots (docs: Update): the user itself, if a bot, gets
   * my_chat_member; every other bot administering the chat gets chat_member. No change, no update.
   */
  change(chat: Chat, userId: number, next: Membership, from: number, link?: FakeInviteLink, viaJoinRequest = false): void {
    const old = this.membership(chat, userId);
    const same = (m: Membership) => [m.status, m.until_date, m.rights?.can_invite_users, m.rights?.can_restrict_members].join();
    if (same(old) === same(next)) return;
    if (next.status === 'left') chat.members.delete(userId);
    else chat.members.set(userId, next);
    if (isIn(next) || next.status === 'kicked') this.dropRequest(chat, userId);
    const date = unixNow();
    for (const bot of this.bots.values()) {
      const kind: UpdateKind | null = bot.id === userId ? 'my_chat_member' : isAdmin(this.membership(chat, bot.id)) ? 'chat_member' : null;
      if (!kind) continue;
      this.emit(bot, kind, {
        chat: this.chatJson(chat),
        from: this.userJson(from),
        date,
        old_chat_member: this.memberJson(chat, userId, old),
        new_chat_member: this.memberJson(chat, userId, next),
        ...(link ? { invite_link: this.linkJson(link, bot.id) } : {}),
        ...(viaJoinRequest ? { via_join_request: true } : {}),
      });
    }
  }

  /** chat_join_request goes to the bots holding can_invite_users (docs: Update). */
  private emitJoinRequest(chat: Chat, userId: number, link: FakeInviteLink): void {
    for (const bot of this.bots.values()) {
      const m = this.membership(chat, bot.id);
      if (m.status !== 'creator' && !(m.status === 'administrator' && m.rights?.can_invite_users)) continue;
      // user_chat_id: the private chat with the user, whose id is the user's id.
      this.emit(bot, 'chat_join_request', { chat: this.chatJson(chat), from: this.userJson(userId), user_chat_id: userId, date: unixNow(), invite_link: this.linkJson(link, bot.id) });
    }
  }

  /** Queues an update; one of a kind the bot's allowed_updates leaves out is never created. */
  emit(bot: Bot, kind: UpdateKind, payload: Record<string, unknown>): void {
    if (bot.allowedUpdates ? !bot.allowedUpdates.has(kind) : NOT_BY_DEFAULT.has(kind)) return;
    bot.queue.push({ update_id: bot.nextUpdateId++, createdAt: Date.now(), body: { [kind]: payload } });
    this.notify(bot);
  }

  /** The bot's unconfirmed updates, those older than 24 h dropped. */
  pending(bot: Bot): Update[] {
    const oldest = Date.now() - UPDATE_LIFETIME_MS;
    while (bot.queue.length && bot.queue[0]!.createdAt < oldest) bot.queue.shift();
    return bot.queue;
  }

  // ---- JSON shapes (docs: User, Chat, ChatMember, ChatInviteLink) --------------------------------

  userJson(userId: number) {
    const user = this.user(userId);
    return { id: user.id, is_bot: user.isBot, first_name: user.first_name, ...(user.username ? { username: user.username } : {}) };
  }

  chatJson(chat: Chat) {
    return { id: chat.id, title: chat.title, type: chat.type };
  }

  /** The ChatMember of the status (ChatMemberOwner, …Administrator, …Member, …Left, …Banned). */
  memberJson(chat: Chat, userId: number, m: Membership) {
    const user = this.userJson(userId);
    switch (m.status) {
      case 'creator':
        return { user, status: m.status, is_anonymous: false };
      case 'administrator': {
        const r = m.rights ?? ALL_RIGHTS;
        const byType = chat.type === 'channel' ? { can_post_messages: true, can_edit_messages: true } : { can_pin_messages: true };
        return {
          ...{ user, status: m.status, can_be_edited: false, is_anonymous: false, ...ADMIN_RIGHTS, ...STORY_RIGHTS, ...byType },
          ...{ can_restrict_members: r.can_restrict_members, can_invite_users: r.can_invite_users },
          ...(chat.type === 'supergroup' ? { can_manage_topics: false } : {}),
        };
      }
      case 'kicked':
        return { user, status: m.status, until_date: m.until_date };
      case 'restricted':
        return { user, status: m.status, is_member: true, until_date: m.until_date };
      default:
        return { user, status: m.status };
    }
  }

  /** A ChatInviteLink; another admin's link is shown with "the second part … replaced with “…”". */
  linkJson(link: FakeInviteLink, forBotId: number) {
    const mine = link.creator_id === forBotId;
    const hash = link.invite_link.slice('https://t.me/+'.length);
    return {
      invite_link: mine ? link.invite_link : `https://t.me/+${hash.slice(0, 8)}…`,
      creator: this.userJson(link.creator_id),
      creates_join_request: link.creates_join_request,
      is_primary: false,
      is_revoked: link.is_revoked,
      ...(link.name ? { name: link.name } : {}),
      ...(link.expire_date !== undefined ? { expire_date: link.expire_date } : {}),
      ...(link.member_limit !== undefined ? { member_limit: link.member_limit } : {}),
      ...(link.pending.length ? { pending_join_request_count: link.pending.length } : {}),
    };
  }
}

/** `<bot id>:<35 characters of [A-Za-z0-9_-]>`, shaped like BotFather's tokens. */
function newToken(id: number): string {
  return `${id}:${randomBytes(27).toString('base64url').slice(0, 35)}`;
}

export const newInviteLink = () => `https://t.me/+${randomBytes(12).toString('base64url').slice(0, 16)}`;

function found<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`fake telegram: no ${what}`);
  return value;
}
