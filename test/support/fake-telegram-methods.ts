import type { IncomingMessage } from 'node:http';
import { isIn, newInviteLink, unixNow, type Bot, type Chat, type Membership, type TelegramWorld } from './fake-telegram-model.js';
import type { UpdateDelivery } from './fake-telegram.js';

/**
 * The Bot API methods the fake Telegram serves, with the errors the official server answers, how
 * it reads parameters, and the fake's rate limits (see the header of fake-telegram.ts). Parameters
 * are read as the server reads them: every value a string (JSON numbers and booleans converted,
 * objects and arrays as JSON), integers clamped, booleans "true" / "1" / "yes".
 */

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export interface MethodContext {
  bot: Bot;
  args: Args;
  /** Aborted when the caller goes away (ends a long poll). */
  signal: AbortSignal;
}

export type Method = (ctx: MethodContext) => Answer | Promise<Answer>;

export const ok = (result: unknown, description?: string): Answer => ({ status: 200, body: { ok: true, result, ...(description ? { description } : {}) } });
export const fail = (code: number, description: string, parameters?: Record<string, unknown>): Answer => ({
  status: code,
  body: { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) },
});
const isAnswer = (value: unknown): value is Answer => typeof value === 'object' && value !== null && 'status' in value && 'body' in value;

/** A request's parameters, read as the official server reads them. */
export class Args {
  constructor(readonly raw: Record<string, unknown>) {}

  str(name: string): string {
    const value = this.raw[name];
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }

  /** td::to_integer: the leading integer, 0 if none; clamped like get_integer_arg. */
  int(name: string, fallback = 0, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
    const text = this.str(name).trim();
    if (!text) return fallback;
    const match = /^[+-]?\d+/.exec(text);
    return Math.min(max, Math.max(min, match ? Number(match[0]) : 0));
  }

  bool(name: string): boolean {
    return ['true', 'yes', '1'].includes(this.str(name).trim().toLowerCase());
  }

  /** allowed_updates: a list of names; null when absent or not a list (the previous setting stays). */
  updateKinds(name: string): string[] | null {
    try {
      const value: unknown = JSON.parse(this.str(name));
      return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value.map((v) => v.toLowerCase()) : null;
    } catch {
      return null;
    }
  }
}

/** The query string's parameters, then the body's (JSON, URL-encoded or multipart). */
export async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = req.headers['content-type'] ?? '';
  if (!body.length) return params;
  if (type.includes('application/json')) {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? { ...params, ...parsed } : params;
  }
  if (type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data')) {
    const form = await new Response(body, { headers: { 'content-type': type } }).formData();
    for (const [key, value] of form) params[key] = typeof value === 'string' ? value : `<file ${value.name}>`;
  }
  return params;
}

/** The fake's rate limits: fixed 1 s windows; a refusal holds the key for retry_after whole seconds. */
export class Windows {
  private readonly windows = new Map<string, { start: number; count: number; blockedUntil: number }>();

  /** 0 if the call may go (counted in every window), else retry_after in seconds (counted in none). */
  take(limits: [key: string, limit: number][], now: number): number {
    const windows = limits.map(([key, limit]) => {
      let w = this.windows.get(key);
      if (!w) this.windows.set(key, (w = { start: now, count: 0, blockedUntil: 0 }));
      if (now - w.start >= 1000) Object.assign(w, { start: now, count: 0 });
      return { w, limit };
    });
    for (const { w, limit } of windows) {
      if (now < w.blockedUntil) return Math.ceil((w.blockedUntil - now) / 1000);
      if (w.count < limit) continue;
      const retryAfter = Math.max(1, Math.ceil((w.start + 1000 - now) / 1000));
      w.blockedUntil = now + retryAfter * 1000;
      return retryAfter;
    }
    for (const { w } of windows) w.count++;
    return 0;
  }
}

export function telegramMethods(world: TelegramWorld, delivery: UpdateDelivery): Record<string, Method> {
  /** check_chat: the chat, or the error for a chat the bot cannot use. */
  const chatFor = (bot: Bot, args: Args): Chat | Answer => {
    const text = args.str('chat_id');
    if (!text) return fail(400, 'Bad Request: chat_id is empty');
    const chat = /^-?\d+$/.test(text) ? world.chats.get(Number(text)) : undefined;
    if (!chat) return fail(400, 'Bad Request: chat not found');
    const place = world.membership(chat, bot.id).status;
    if (place === 'kicked') return fail(403, `Forbidden: bot was kicked from the ${chat.type} chat`);
    if (place === 'left') return fail(403, `Forbidden: bot is not a member of the ${chat.type} chat`);
    return chat;
  };
  const userId = (args: Args): number | Answer => {
    const id = Math.max(0, args.int('user_id'));
    return id === 0 ? fail(400, 'Bad Request: invalid user_id specified') : id;
  };
  const knownUser = (id: number): Answer | null => (world.users.has(id) ? null : fail(400, 'Bad Request: user not found'));
  const can = (m: Membership, right: 'can_invite_users' | 'can_restrict_members') => m.status === 'creator' || (m.status === 'administrator' && m.rights?.[right] === true);

  /** The chat and a right of the bot there, or the error. */
  const managed = (bot: Bot, args: Args, right: 'can_invite_users' | 'can_restrict_members', refusal: string): Chat | Answer => {
    const chat = chatFor(bot, args);
    if (isAnswer(chat)) return chat;
    return can(world.membership(chat, bot.id), right) ? chat : fail(400, `Bad Request: ${refusal}`);
  };
  const INVITE_RIGHTS = 'not enough rights to manage chat invite link';
  const REQUEST_RIGHTS = 'not enough rights to manage chat join requests';
  const RESTRICT_RIGHTS = 'not enough rights to restrict/unrestrict chat member';

  /** Who a ban or removal may not touch: the owner, and administrators (only whoever promoted them could). */
  const untouchable = (chat: Chat, id: number): Answer | null => {
    const status = world.membership(chat, id).status;
    if (status === 'creator') return fail(400, "Bad Request: can't remove chat owner");
    if (status === 'administrator') return fail(400, 'Bad Request: user is an administrator of the chat');
    return null;
  };

  /** A chat and a user for the methods about one member, with the right they need. */
  const aboutMember = (bot: Bot, args: Args, right: 'can_invite_users' | 'can_restrict_members', refusal: string) => {
    const id = userId(args);
    if (isAnswer(id)) return id;
    const chat = managed(bot, args, right, refusal);
    if (isAnswer(chat)) return chat;
    return knownUser(id) ?? { chat, id };
  };

  return {
    getme: ({ bot }) =>
      ok({
        ...world.userJson(bot.id),
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
        can_connect_to_business: false,
        has_main_web_app: false,
      }),

    getchat: ({ bot, args }) => {
      const chat = chatFor(bot, args);
      if (isAnswer(chat)) return chat;
      // ChatFullInfo: its required fields.
      const gifts = { unlimited_gifts: false, limited_gifts: false, unique_gifts: false, premium_subscription: false };
      return ok({ ...world.chatJson(chat), accent_color_id: 0, max_reaction_count: 11, accepted_gift_types: gifts });
    },

    getchatmember: ({ bot, args }) => {
      const id = userId(args);
      if (isAnswer(id)) return id;
      const chat = chatFor(bot, args);
      if (isAnswer(chat)) return chat;
      return knownUser(id) ?? ok(world.memberJson(chat, id, world.membership(chat, id)));
    },

    createchatinvitelink: ({ bot, args }) => {
      const chat = managed(bot, args, 'can_invite_users', INVITE_RIGHTS);
      if (isAnswer(chat)) return chat;
      const expireDate = args.int('expire_date', 0, 0);
      const memberLimit = args.int('member_limit', 0, 0, 100_000);
      const createsJoinRequest = args.bool('creates_join_request');
      if (createsJoinRequest && memberLimit > 0) return fail(400, "Bad Request: member limit can't be specified for links requiring administrator approval");
      if (expireDate > 0 && expireDate <= unixNow()) return fail(400, 'Bad Request: EXPIRE_DATE_INVALID');
      if (memberLimit > 99_999) return fail(400, 'Bad Request: USAGE_LIMIT_INVALID');
      // The name is cut to 32 characters, not refused (TDLib: clean_name, MAX_INVITE_LINK_TITLE_LENGTH).
      const name = [...args.str('name').trim()].slice(0, 32).join('');
      const link = {
        invite_link: newInviteLink(),
        chat_id: chat.id,
        creator_id: bot.id,
        ...(name ? { name } : {}),
        ...(expireDate > 0 ? { expire_date: expireDate } : {}),
        ...(memberLimit > 0 ? { member_limit: memberLimit } : {}),
        creates_join_request: createsJoinRequest,
        is_revoked: false,
        uses: [],
        pending: [],
      };
      chat.links.push(link);
      return ok(world.linkJson(link, bot.id));
    },

    revokechatinvitelink: ({ bot, args }) => {
      const chat = managed(bot, args, 'can_invite_users', INVITE_RIGHTS);
      if (isAnswer(chat)) return chat;
      const url = args.str('invite_link');
      if (!url) return fail(400, 'Bad Request: invite link must be non-empty');
      // A bot manages the links it created (docs: "revoke an invite link created by the bot").
      const link = chat.links.find((l) => l.invite_link === url && l.creator_id === bot.id);
      if (!link) return fail(400, 'Bad Request: INVITE_HASH_EXPIRED');
      link.is_revoked = true;
      return ok(world.linkJson(link, bot.id));
    },

    banchatmember: ({ bot, args }) => {
      const target = aboutMember(bot, args, 'can_restrict_members', RESTRICT_RIGHTS);
      if (isAnswer(target)) return target;
      const refused = untouchable(target.chat, target.id);
      if (refused) return refused;
      // "banned for more than 366 days or less than 30 seconds from the current time … banned forever".
      const until = args.int('until_date');
      const now = unixNow();
      const untilDate = until < now + 30 || until > now + 366 * 86_400 ? 0 : until;
      world.change(target.chat, target.id, { status: 'kicked', until_date: untilDate }, bot.id);
      return ok(true);
    },

    unbanchatmember: ({ bot, args }) => {
      const id = userId(args);
      if (isAnswer(id)) return id;
      const chat = chatFor(bot, args);
      if (isAnswer(chat)) return chat;
      if (chat.type === 'group') return fail(400, 'Bad Request: method is available for supergroup and channel chats only');
      if (!can(world.membership(chat, bot.id), 'can_restrict_members')) return fail(400, `Bad Request: ${RESTRICT_RIGHTS}`);
      const missing = knownUser(id);
      if (missing) return missing;
      const status = world.membership(chat, id).status;
      // only_if_banned: anyone not banned is left alone; without it a member is removed too (docs).
      if (args.bool('only_if_banned') && status !== 'kicked') return ok(true);
      const refused = untouchable(chat, id);
      if (refused) return refused;
      if (status !== 'left') world.change(chat, id, { status: 'left', until_date: 0 }, bot.id);
      return ok(true);
    },

    approvechatjoinrequest: ({ bot, args }) => {
      const target = aboutMember(bot, args, 'can_invite_users', REQUEST_RIGHTS);
      if (isAnswer(target)) return target;
      if (isIn(world.membership(target.chat, target.id))) return fail(400, 'Bad Request: USER_ALREADY_PARTICIPANT');
      const link = world.dropRequest(target.chat, target.id);
      if (!link) return fail(400, 'Bad Request: HIDE_REQUESTER_MISSING');
      world.admit(target.chat, target.id, link, bot.id, true);
      return ok(true);
    },

    declinechatjoinrequest: ({ bot, args }) => {
      const target = aboutMember(bot, args, 'can_invite_users', REQUEST_RIGHTS);
      if (isAnswer(target)) return target;
      return world.dropRequest(target.chat, target.id) ? ok(true) : fail(400, 'Bad Request: HIDE_REQUESTER_MISSING');
    },

    getupdates: ({ bot, args, signal }) => {
      if (bot.webhook) return fail(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
      const kinds = args.updateKinds('allowed_updates');
      if (kinds) setAllowed(bot, kinds);
      // get_integer_arg: limit clamped to 1..100 (default 100), timeout to 0..50 s.
      return delivery.getUpdates(bot, args.int('offset'), args.int('limit', 100, 1, 100), args.int('timeout', 0, 0, 50), signal);
    },

    setwebhook: ({ bot, args }) => setWebhook(bot, args, args.str('url')),
    deletewebhook: ({ bot, args }) => setWebhook(bot, args, ''),

    getwebhookinfo: ({ bot }) => {
      const hook = bot.webhook;
      return ok({
        url: hook?.url ?? '',
        has_custom_certificate: false,
        pending_update_count: world.pending(bot).length,
        ...(hook?.lastErrorDate ? { last_error_date: hook.lastErrorDate, last_error_message: hook.lastErrorMessage } : {}),
        ...(hook ? { max_connections: hook.maxConnections, ip_address: '127.0.0.1' } : {}),
        ...(bot.allowedUpdates ? { allowed_updates: [...bot.allowedUpdates] } : {}),
      });
    },
  };

  /** An empty list means the default set again. */
  function setAllowed(bot: Bot, kinds: string[]): void {
    bot.allowedUpdates = kinds.length ? new Set(kinds) : null;
  }

  /** setWebhook and deleteWebhook (an empty url), as the official server's process_set_webhook_query. */
  function setWebhook(bot: Bot, args: Args, url: string): Answer {
    if (url) {
      // One setWebhook with a URL per second; more: 429 retry after 1.
      if (!delivery.maySetWebhook(bot)) return fail(429, 'Too Many Requests: retry after 1', { retry_after: 1 });
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) return fail(400, 'Bad Request: invalid webhook URL specified');
      const secret = args.str('secret_token');
      if (secret.length > 256) return fail(400, 'Bad Request: secret token is too long');
      if (!/^[A-Za-z0-9_-]*$/.test(secret)) return fail(400, 'Bad Request: secret token contains unallowed characters');
    }
    const kinds = url ? args.updateKinds('allowed_updates') : null;
    if (kinds) setAllowed(bot, kinds);
    if (args.bool('drop_pending_updates')) bot.queue.length = 0;
    const had = bot.webhook;
    if (!url) {
      bot.webhook = null;
      return ok(true, had ? 'Webhook was deleted' : 'Webhook is already deleted');
    }
    delivery.endPoll(bot, 'Conflict: terminated by setWebhook request');
    const secretToken = args.str('secret_token');
    const maxConnections = args.int('max_connections', 40, 1, 100);
    if (had?.url === url && had.secretToken === secretToken && had.maxConnections === maxConnections) return ok(true, 'Webhook is already set');
    bot.webhook = { url, secretToken, maxConnections };
    delivery.notify(bot);
    return ok(true, 'Webhook was set');
  }
}
