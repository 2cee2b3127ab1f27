import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Conversations, type CallbackAnswer, type SentMessage } from './fake-telegram-messages.js';
import { Args, fail, ok, readParams, telegramMethods, Windows, type Answer } from './fake-telegram-methods.js';
import { TelegramWorld, unixNow, type Bot, type FakeInviteLink, type Update, type Webhook } from './fake-telegram-model.js';

/**
 * A local fake of the Telegram Bot API (node:http on 127.0.0.1, port 0) for the methods tenure
 * calls: the oracle of every Telegram test. Written from the documentation
 * (https://core.telegram.org/bots/api, "docs" below) and, where the docs say nothing, from the
 * official server's source (github.com/tdlib/telegram-bot-api, "server": Client.cpp,
 * HttpConnection.cpp, WebhookActor.cpp) and TDLib's (github.com/tdlib/td, "TDLib"); not from what
 * tenure happens to send.
 *
 * Behaviour, and where it comes from:
 * - Requests (docs: "Making requests"): `GET` or `POST {url}/bot<token>/<method>`, parameters in
 *   the query string, a JSON body, `application/x-www-form-urlencoded` or `multipart/form-data`;
 *   method names are case-insensitive. Answers `{ok: true, result}` (setWebhook / deleteWebhook add
 *   a `description`, as the server does) or `{ok: false, error_code, description, parameters?}`,
 *   with the HTTP status = error_code. A path not of that shape, or a token not shaped
 *   `<id>:<secret>`, answers 404 `Not Found` (as api.telegram.org does); an unknown or reset token
 *   401 `Unauthorized`; an unknown method 404 `Not Found`.
 * - Parameters are read as the server reads them (Client.cpp get_integer_arg, to_bool): integers
 *   clamped into range, not refused (getUpdates limit 1..100, timeout 0..50); booleans "true",
 *   "1", "yes". chat_id missing: 400 `Bad Request: chat_id is empty`; user_id missing or not
 *   positive: 400 `Bad Request: invalid user_id specified`.
 * - Chat access (server: check_chat_access): unknown chat → 400 `Bad Request: chat not found`; the
 *   bot not in it → 403 `Forbidden: bot is not a member of the <supergroup|channel|group> chat`;
 *   removed → 403 `Forbidden: bot was kicked from the <type> chat`.
 * - getMe; getChat (ChatFullInfo's required fields); getChatMember (ChatMemberOwner, …Administrator
 *   with its can_* rights per chat type, …Member, …Left, …Banned with until_date; a user the fake
 *   does not know → 400 `Bad Request: user not found`; a known one never in the chat → `left`).
 * - createChatInviteLink (docs): needs an administrator with can_invite_users, else 400 `Bad
 *   Request: not enough rights to manage chat invite link` (TDLib); member_limit with
 *   creates_join_request → 400 `Bad Request: member limit can't be specified for links requiring
 *   administrator approval` (TDLib); expire_date in the past → 400 `Bad Request:
 *   EXPIRE_DATE_INVALID`, member_limit over 99999 → 400 `Bad Request: USAGE_LIMIT_INVALID`
 *   (Telegram's server errors, passed on); a name over 32 characters is cut (TDLib clean_name). The
 *   link is `https://t.me/+<16 chars>`, is_primary false. member_limit counts members who joined
 *   through the link and are still in ("simultaneously", docs).
 * - revokeChatInviteLink: only the bot's own links ("created by the bot", docs); another's or an
 *   unknown one → 400 `Bad Request: INVITE_HASH_EXPIRED`; returns the link, is_revoked true.
 * - banChatMember (docs): needs can_restrict_members, else 400 `Bad Request: not enough rights to
 *   restrict/unrestrict chat member`; the owner → 400 `Bad Request: can't remove chat owner`; an
 *   administrator → 400 `Bad Request: user is an administrator of the chat` (the server's
 *   messages, as bots see them); until_date under 30 s or over 366 days away is forever (0); a
 *   temporary ban ends by itself; revoke_messages is accepted. unbanChatMember: supergroups and
 *   channels only (400 `Bad Request: method is available for supergroup and channel chats only`);
 *   with only_if_banned only a banned user is touched; without it a member is removed too (docs).
 * - approveChatJoinRequest / declineChatJoinRequest: can_invite_users, else 400 `Bad Request: not
 *   enough rights to manage chat join requests` (TDLib); a member → 400 `Bad Request:
 *   USER_ALREADY_PARTICIPANT`; no pending request → 400 `Bad Request: HIDE_REQUESTER_MISSING`.
 * - Updates (docs: Update, ChatMemberUpdated, ChatJoinRequest): per bot, update_id increasing from
 *   a random start, kept until confirmed (24 h). A member's change → chat_member to every bot
 *   administering the chat; the bot's own → my_chat_member; a join request → chat_join_request to
 *   bots with can_invite_users. A join's invite_link is the ChatInviteLink; another admin's link
 *   comes with "the second part … replaced with “…”" (docs: ChatInviteLink); an approved request adds
 *   via_join_request (its `from` is the approving bot). allowed_updates (getUpdates, setWebhook) is
 *   kept across calls; `[]` is the default, every kind but chat_member (docs); it applies to updates
 *   created afterwards (server: add_update_impl drops the others).
 * - getUpdates (docs; server do_get_updates): offset confirms every update below it, a negative one
 *   keeps the last -offset; timeout is a long poll answered a moment after the first update; a
 *   second getUpdates ends the waiting one with 409 `Conflict: terminated by other getUpdates
 *   request; make sure that only one bot instance is running`; while a webhook is set: 409
 *   `Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the
 *   webhook first`. Not modelled: the server's 3 s floor on repeated short polls.
 * - setWebhook (url, secret_token 0-256 of [A-Za-z0-9_-], allowed_updates, max_connections,
 *   drop_pending_updates) / deleteWebhook / getWebhookInfo, with the server's errors and its one
 *   setWebhook per second (429 retry after 1). http:// is accepted, as by a local server. Each update
 *   is POSTed as JSON with `X-Telegram-Bot-Api-Secret-Token`; a non-2xx answer is retried after a
 *   doubling delay (Telegram: up to 60-120 s, for 24 h; here `webhookRetryMs`, `webhookAttempts`
 *   in all, then dropped) and reported in last_error_date / last_error_message. One at a time, in
 *   order (Telegram: up to max_connections at once). Replies in the webhook's answer are not read.
 * - Rate limits: Telegram publishes none for these methods (its FAQ speaks of messages: about 30
 *   per second, one per second per chat). The fake: `globalPerSecond` (default 30) per bot and
 *   `chatPerSecond` (default 20) per bot and chat_id, fixed 1 s windows, getUpdates not counted;
 *   over either: 429 `Too Many Requests: retry after N`, `parameters: {retry_after: N}` (server:
 *   Query::set_retry_after_error), and every call before N seconds have passed is refused again.
 * - The world's hooks: a chat starts with a human owner (`setOwner` hands it on; the former owner
 *   stays an administrator, as after Telegram's transfer); what a user does has them as `from`,
 *   what a human admin does (addMember, banByAdmin, setBot) the owner; a change to the same status
 *   makes no update; `join` by someone already in answers 'joined' and changes nothing.
 * - Conversations (fake-telegram-messages.ts): a user's private message or group message
 *   (`say`), a press of an inline button the bot sent (`press`), a user blocking the bot
 *   (`setBlocked`: sendMessage then answers 403 `Forbidden: bot was blocked by the user`);
 *   sendMessage with its InlineKeyboardMarkup, recorded per chat (`messages`), and
 *   answerCallbackQuery (`callbackAnswers`).
 * - Test hooks: `failNext` (after the rate limits), `latencyMs`, `calls` (no tokens), `close()`.
 */

export type { FakeInviteLink } from './fake-telegram-model.js';
export type { CallbackAnswer, SentMessage } from './fake-telegram-messages.js';

export interface FakeTelegramOptions {
  /** Delay before each answer, in ms (default 0). */
  latencyMs?: number;
  /** Calls per second per bot (default 30). */
  globalPerSecond?: number;
  /** Calls per second per (bot, chat) (default 20). */
  chatPerSecond?: number;
  /** Deliveries of one update to a webhook before it is dropped (default 5). */
  webhookAttempts?: number;
  /** The first retry's delay, doubled for each next one (default 100 ms). */
  webhookRetryMs?: number;
}

export interface FakeCall {
  method: string;
  botId: number | null;
  params: Record<string, unknown>;
  status: number;
  /** Arrival, epoch ms. */
  at: number;
}

export interface FakeTelegram {
  /** The apiRoot: `${url}/bot<token>/<method>` (TENURE_TELEGRAM_API_URL). */
  readonly url: string;
  /** A bot; its token is `${id}:<35 chars [A-Za-z0-9_-]>`. */
  addBot(o?: { id?: number; username?: string; first_name?: string }): { id: number; token: string; username: string };
  /** A new token; the old one answers 401 from now on. */
  resetToken(botId: number): string;
  /** Ids negative, supergroups and channels -100…; a new human owner. */
  addChat(o: { type: 'supergroup' | 'channel' | 'group'; title?: string; id?: number }): { id: number };
  /** The bot's place in the chat: 'admin' with rights (default both true), 'member', 'none', 'kicked'. */
  setBot(chatId: number, botId: number, place: 'admin' | 'member' | 'none' | 'kicked', rights?: { can_invite_users?: boolean; can_restrict_members?: boolean }): void;
  /** A human user (ids positive). */
  addUser(o?: { id?: number; first_name?: string; username?: string }): { id: number };
  setOwner(chatId: number, userId: number): void;
  /** The user opens an invite link: joins, or files a join request when the link creates_join_request. */
  join(userId: number, inviteLink: string): { result: 'joined' } | { result: 'requested' } | { result: 'refused'; reason: 'expired' | 'revoked' | 'used_up' | 'banned' | 'unknown_link' };
  /** Added by a human admin (no link): a join with no invite_link in the update. */
  addMember(chatId: number, userId: number): void;
  leave(chatId: number, userId: number): void;
  /** A human admin bans the user (status 'kicked'). */
  banByAdmin(chatId: number, userId: number): void;
  status(chatId: number, userId: number): 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';
  /** Every link created in the chat (copies). */
  links(chatId: number): FakeInviteLink[];
  /** The next join's chat_member updates come without `invite_link`, as Telegram sends some rejoins. */
  omitInviteLinkOnNextJoin(): void;
  /** The user writes `text` to the bot: in their private chat (which opens it), or in the group `chatId`. */
  say(userId: number, botId: number, text: string, o?: { chatId?: number }): { message_id: number };
  /** The user presses the callback button `data` of the bot's message `messageId` in `chatId` (a private chat's id is the user's). */
  press(userId: number, botId: number, chatId: number, messageId: number, data: string): { callback_query_id: string };
  /** The user blocks (true) or unblocks the bot. */
  setBlocked(userId: number, botId: number, blocked: boolean): void;
  /** The messages the bot sent in a chat, in order. */
  messages(botId: number, chatId: number): SentMessage[];
  /** The bot's answers to callback queries, in order. */
  callbackAnswers(botId: number): CallbackAnswer[];
  /** The next n requests (optionally of one method) answer this error. */
  failNext(n: number, error: { error_code: number; description: string; retry_after?: number }, method?: string): void;
  /** Every request, in the order answered. */
  readonly calls: FakeCall[];
  close(): Promise<void>;
}

export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const world = new TelegramWorld((bot) => delivery.notify(bot));
  const delivery = new UpdateDelivery(world, { attempts: options.webhookAttempts ?? 5, firstDelayMs: options.webhookRetryMs ?? 100 });
  const conversations = new Conversations(world);
  const methods = { ...telegramMethods(world, delivery), ...conversations.methods() };
  const limits = new Windows();
  const failures: { error: { error_code: number; description: string; retry_after?: number }; method?: string }[] = [];
  const calls: FakeCall[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, call: FakeCall, answer: Answer) => {
    call.status = answer.status;
    calls.push(call);
    const payload = JSON.stringify(answer.body);
    const write = () => {
      if (!res.destroyed) res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }).end(payload);
    };
    if (!options.latencyMs) return write();
    const timer = setTimeout(() => {
      timers.delete(timer);
      write();
    }, options.latencyMs);
    timers.add(timer);
  };

  /** In the server's order: the path, the token, the method; then the fake's limits and failures. */
  const answer = (call: FakeCall, path: string, signal: AbortSignal): Answer | Promise<Answer> => {
    const parts = /^\/bot([^/]*)\/([^/]+)$/.exec(path);
    if (!parts || !/^\d+:[\w-]+$/.test(parts[1]!)) return fail(404, 'Not Found');
    const bot = world.botsByToken.get(parts[1]!);
    if (!bot) return fail(401, 'Unauthorized');
    call.botId = bot.id;
    const method = methods[parts[2]!.toLowerCase()];
    if (!method) return fail(404, 'Not Found');
    const args = new Args(call.params);
    const counted: [string, number][] = call.method.toLowerCase() === 'getupdates' ? [] : [[`${bot.id}`, options.globalPerSecond ?? 30]];
    if (args.str('chat_id')) counted.push([`${bot.id} ${args.str('chat_id')}`, options.chatPerSecond ?? 20]);
    const retryAfter = limits.take(counted, call.at);
    if (retryAfter) return fail(429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter });
    const i = failures.findIndex((f) => !f.method || f.method.toLowerCase() === call.method.toLowerCase());
    if (i >= 0) {
      const [{ error }] = failures.splice(i, 1) as [(typeof failures)[number]];
      return fail(error.error_code, error.description, error.retry_after === undefined ? undefined : { retry_after: error.retry_after });
    }
    return method({ bot, args, signal });
  };

  const server = createServer((req, res) => {
    const at = Date.now();
    const url = new URL(req.url ?? '/', 'http://fake-telegram');
    const call: FakeCall = { method: url.pathname.split('/').pop() ?? '', botId: null, params: {}, status: 0, at };
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    readParams(req, url).then(
      async (params) => {
        call.params = params;
        send(res, call, await answer(call, url.pathname, gone.signal));
      },
      () => send(res, call, fail(400, "Bad Request: can't parse JSON encoded request")),
    );
  });
  // Telegram's servers keep an idle connection longer than a client's agent does (node's: 5 s), so
  // the client is the one to close it. With node's server default (also 5 s) the two could close
  // the same idle socket at once, and the next call on it failed as a reset: a spurious
  // "unreachable" the real Bot API does not cause (seen once in a full CI run, the fuzz tier).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const chatAndUser = (chatId: number, userId: number) => [world.chat(chatId), world.user(userId).id] as const;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    addBot(o) {
      const bot = world.addBot(o);
      return { id: bot.id, token: bot.token, username: bot.username };
    },
    resetToken: (botId) => world.resetToken(botId),
    addChat: (o) => ({ id: world.addChat(o).id }),
    setBot: (chatId, botId, place, rights) => world.setBot(chatId, botId, place, rights),
    addUser: (o) => ({ id: world.addUser(o).id }),
    setOwner: (chatId, userId) => world.setOwner(chatId, userId),
    join: (userId, inviteLink) => world.join(userId, inviteLink),
    addMember(chatId, userId) {
      const [chat, id] = chatAndUser(chatId, userId);
      world.change(chat, id, { status: 'member', until_date: 0 }, chat.ownerId);
    },
    leave(chatId, userId) {
      const [chat, id] = chatAndUser(chatId, userId);
      world.change(chat, id, { status: 'left', until_date: 0 }, id);
    },
    banByAdmin(chatId, userId) {
      const [chat, id] = chatAndUser(chatId, userId);
      world.change(chat, id, { status: 'kicked', until_date: 0 }, chat.ownerId);
    },
    status(chatId, userId) {
      const [chat, id] = chatAndUser(chatId, userId);
      return world.membership(chat, id).status;
    },
    links: (chatId) => world.chat(chatId).links.map((l) => ({ ...l, uses: [...l.uses], pending: [...l.pending] })),
    say: (userId, botId, text, o) => conversations.say(userId, botId, text, o),
    press: (userId, botId, chatId, messageId, data) => conversations.press(userId, botId, chatId, messageId, data),
    setBlocked: (userId, botId, blocked) => conversations.setBlocked(userId, botId, blocked),
    messages: (botId, chatId) => conversations.messages(botId, chatId),
    callbackAnswers: (botId) => [...(conversations.answers.get(botId) ?? [])],
    omitInviteLinkOnNextJoin() {
      world.omitNextInviteLink = true;
    },
    failNext(n, error, method) {
      for (let i = 0; i < n; i++) failures.push({ error, method });
    },
    async close() {
      delivery.close();
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

const CONFLICT = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';

/**
 * Long polling and webhooks (docs: "Getting updates", getUpdates, setWebhook; the official server's
 * long poll and WebhookActor). One getUpdates waits per bot; a webhook gets one update at a time.
 */
export class UpdateDelivery {
  private readonly polls = new Map<number, { wake(): void; end(answer: Answer): void }>();
  private readonly webhookRuns = new Set<number>();
  private readonly lastSetWebhook = new Map<number, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stop = new AbortController();

  constructor(
    private readonly world: TelegramWorld,
    private readonly retry: { attempts: number; firstDelayMs: number },
  ) {}

  /** A new update for the bot: its webhook, or its waiting getUpdates. */
  notify(bot: Bot): void {
    if (bot.webhook) void this.runWebhook(bot);
    else this.polls.get(bot.id)?.wake();
  }

  /** An offset confirms every update below it; a negative one keeps only the last -offset. */
  getUpdates(bot: Bot, offset: number, limit: number, timeout: number, signal: AbortSignal): Answer | Promise<Answer> {
    const queue = this.world.pending(bot);
    if (offset < 0) queue.splice(0, Math.max(0, queue.length + offset));
    else while (queue.length && queue[0]!.update_id < offset) queue.shift();
    const take = () => ok(this.world.pending(bot).slice(0, limit).map((u) => ({ update_id: u.update_id, ...u.body })));
    this.endPoll(bot, CONFLICT);
    if (queue.length || timeout === 0) return take();
    return new Promise<Answer>((resolve) => {
      let woken = false;
      const finish = (answer: Answer) => {
        clearTimeout(timer);
        if (this.polls.get(bot.id) === poll) this.polls.delete(bot.id);
        resolve(answer);
      };
      const timer = setTimeout(() => finish(take()), timeout * 1000);
      const poll = {
        // Answers a moment after the first update, with whatever else came meanwhile (as the server does).
        wake: () => {
          if (!woken) setImmediate(() => finish(take()));
          woken = true;
        },
        end: finish,
      };
      this.polls.set(bot.id, poll);
      signal.addEventListener('abort', () => finish(ok([])), { once: true });
    });
  }

  /** Ends the bot's waiting getUpdates with a 409 Conflict. */
  endPoll(bot: Bot, description: string): void {
    this.polls.get(bot.id)?.end(fail(409, description));
  }

  /** One setWebhook with a URL per second and bot (the official server's next_allowed_set_webhook_time_). */
  maySetWebhook(bot: Bot): boolean {
    const now = Date.now();
    if (now < (this.lastSetWebhook.get(bot.id) ?? 0) + 1000) return false;
    this.lastSetWebhook.set(bot.id, now);
    return true;
  }

  /** Posts the bot's updates in order; a failed one is retried after a doubling delay, `attempts` times in all. */
  private async runWebhook(bot: Bot): Promise<void> {
    if (this.webhookRuns.has(bot.id)) return;
    this.webhookRuns.add(bot.id);
    let failures = 0;
    try {
      for (let update = this.world.pending(bot)[0]; update && bot.webhook && !this.stop.signal.aborted; update = this.world.pending(bot)[0]) {
        const hook = bot.webhook;
        const error = await this.post(hook, update);
        if (error) Object.assign(hook, { lastErrorDate: unixNow(), lastErrorMessage: error });
        if (!error || ++failures >= this.retry.attempts) {
          failures = 0;
          const i = bot.queue.indexOf(update);
          if (i >= 0) bot.queue.splice(i, 1);
        } else {
          await new Promise<void>((resolve) => this.timers.add(setTimeout(resolve, this.retry.firstDelayMs * 2 ** (failures - 1))));
        }
      }
    } finally {
      this.webhookRuns.delete(bot.id);
    }
  }

  /** null when the receiver answered 2xx, else the error getWebhookInfo reports. */
  private async post(hook: Webhook, update: Update): Promise<string | null> {
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(hook.secretToken ? { 'X-Telegram-Bot-Api-Secret-Token': hook.secretToken } : {}) },
        body: JSON.stringify({ update_id: update.update_id, ...update.body }),
        signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(10_000)]),
      });
      await res.arrayBuffer();
      return res.ok ? null : `Wrong response from the webhook: ${res.status} ${res.statusText}`;
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      return code === 'ECONNREFUSED' ? 'Connection refused' : `Webhook request failed: ${code ?? (error as Error).name}`;
    }
  }

  close(): void {
    this.stop.abort();
    for (const timer of this.timers) clearTimeout(timer);
    for (const poll of this.polls.values()) poll.end(ok([]));
  }
}
