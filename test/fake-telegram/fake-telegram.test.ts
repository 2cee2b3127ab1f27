import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFakeTelegram, type FakeTelegram, type FakeTelegramOptions } from '../support/fake-telegram.js';

/**
 * The fake Telegram Bot API is the oracle of every Telegram test: here it is proven, through
 * grammY's `Api` (and raw fetch where the wire format is the point), to answer as the Bot API
 * documents and the official server behaves.
 */

let fake: FakeTelegram | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0)) await close();
  await fake?.close();
  fake = undefined;
});

async function setup(options?: FakeTelegramOptions) {
  const f = (fake = await startFakeTelegram(options));
  const bot = f.addBot({ username: 'tenure_members_bot' });
  const chat = f.addChat({ type: 'supergroup', title: 'Members' });
  f.setBot(chat.id, bot.id, 'admin');
  const api = new Api(bot.token, { apiRoot: f.url });
  return { fake: f, bot, chat, api, user: () => f.addUser().id, updates: reader(api) };
}

/** getUpdates from where the last call stopped (each call confirms what the previous returned). */
function reader(api: Api) {
  let offset = 0;
  return async (other: Parameters<Api['getUpdates']>[0] = {}): Promise<Update[]> => {
    const list = await api.getUpdates({ offset, timeout: 0, ...other });
    if (list.length) offset = list.at(-1)!.update_id + 1;
    return list;
  };
}

/** The GrammyError the call ends in, as `{error_code, description, parameters}`. */
async function failure(call: Promise<unknown>) {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the call should fail with a GrammyError').toBeInstanceOf(GrammyError);
  const { error_code, description, parameters } = error as GrammyError;
  return { error_code, description, parameters };
}
const badRequest = (description: string) => ({ error_code: 400, description: `Bad Request: ${description}`, parameters: {} });

/** A local webhook receiver answering `statuses` in turn (then 200). */
async function receiver(statuses: number[] = []) {
  const got: { headers: IncomingHttpHeaders; body: Update }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) as Update });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/telegram`, got };
}

/** Waits (up to 2 s) for the check to hold. */
const until = async (check: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await check()).toBe(true);
};
const drained = (api: Api) => until(async () => (await api.getWebhookInfo()).pending_update_count === 0);

describe('fake Telegram Bot API, through grammY', () => {
  it('authenticates /bot<token>/<method> in every encoding; 401 for unknown and reset tokens, 404 for unknown methods', async () => {
    const s = await setup();
    expect(await s.api.getMe()).toMatchObject({ id: s.bot.id, is_bot: true, username: 'tenure_members_bot', can_join_groups: true });
    expect(s.bot.token).toMatch(new RegExp(`^${s.bot.id}:[A-Za-z0-9_-]{35}$`));

    const url = `${s.fake.url}/bot${s.bot.token}`;
    const query = await fetch(`${url}/getchat?chat_id=${s.chat.id}`);
    const form = await fetch(`${url}/getChat`, { method: 'POST', body: new URLSearchParams({ chat_id: String(s.chat.id) }) });
    const multipart = new FormData();
    multipart.set('chat_id', String(s.chat.id));
    const parts = await fetch(`${url}/getChat`, { method: 'POST', body: multipart });
    for (const res of [query, form, parts]) {
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, result: { id: s.chat.id, type: 'supergroup', title: 'Members' } });
    }
    const unknown = await fetch(`${url}/sendTelepathy`, { method: 'POST' });
    expect([unknown.status, await unknown.json()]).toEqual([404, { ok: false, error_code: 404, description: 'Not Found' }]);

    const old = s.bot.token;
    const fresh = s.fake.resetToken(s.bot.id);
    expect(await failure(s.api.getMe())).toEqual({ error_code: 401, description: 'Unauthorized', parameters: {} });
    expect(await failure(new Api(`${s.bot.id}:nope`, { apiRoot: s.fake.url }).getMe())).toMatchObject({ error_code: 401 });
    expect((await new Api(fresh, { apiRoot: s.fake.url }).getMe()).id).toBe(s.bot.id);
    expect(s.fake.calls.map((c) => [c.method, c.botId, c.status])).toEqual([
      ['getMe', s.bot.id, 200],
      ['getchat', s.bot.id, 200],
      ['getChat', s.bot.id, 200],
      ['getChat', s.bot.id, 200],
      ['sendTelepathy', s.bot.id, 404],
      ['getMe', null, 401],
      ['getMe', null, 401],
      ['getMe', s.bot.id, 200],
    ]);
    expect(s.fake.calls[2]!.params).toEqual({ chat_id: String(s.chat.id) });
    expect(JSON.stringify(s.fake.calls)).not.toContain(old.split(':')[1]);
  });

  it('answers 403 for a chat the bot is not in or was removed from, 400 for an unknown chat', async () => {
    const s = await setup();
    const channel = s.fake.addChat({ type: 'channel' });
    expect(String(channel.id)).toMatch(/^-100\d+$/);
    expect(await failure(s.api.getChat(channel.id))).toEqual({ error_code: 403, description: 'Forbidden: bot is not a member of the channel chat', parameters: {} });
    s.fake.setBot(s.chat.id, s.bot.id, 'none');
    expect(await failure(s.api.getChat(s.chat.id))).toMatchObject({ error_code: 403, description: 'Forbidden: bot is not a member of the supergroup chat' });
    s.fake.setBot(s.chat.id, s.bot.id, 'kicked');
    expect(await failure(s.api.getChatMember(s.chat.id, s.bot.id))).toMatchObject({ error_code: 403, description: 'Forbidden: bot was kicked from the supergroup chat' });
    expect(await failure(s.api.getChat(-100123))).toEqual(badRequest('chat not found'));
  });

  it('getChatMember: each ChatMember type, left for a known user never in the chat, 400 for an unknown user', async () => {
    const s = await setup();
    const [owner, member, banned, stranger] = [s.user(), s.user(), s.user(), s.user()];
    s.fake.setOwner(s.chat.id, owner);
    s.fake.addMember(s.chat.id, member);
    s.fake.banByAdmin(s.chat.id, banned);
    expect(await s.api.getChatMember(s.chat.id, owner)).toEqual({ user: { id: owner, is_bot: false, first_name: `User ${owner}` }, status: 'creator', is_anonymous: false });
    expect(await s.api.getChatMember(s.chat.id, s.bot.id)).toMatchObject({ status: 'administrator', can_invite_users: true, can_restrict_members: true, can_be_edited: false });
    expect(await s.api.getChatMember(s.chat.id, member)).toMatchObject({ status: 'member', user: { id: member } });
    expect(await s.api.getChatMember(s.chat.id, banned)).toMatchObject({ status: 'kicked', until_date: 0 });
    expect(await s.api.getChatMember(s.chat.id, stranger)).toMatchObject({ status: 'left' });
    expect(await failure(s.api.getChatMember(s.chat.id, 123))).toEqual(badRequest('user not found'));
    expect(await failure(s.api.getChatMember(s.chat.id, 0))).toEqual(badRequest('invalid user_id specified'));
  });

  it('createChatInviteLink: the ChatInviteLink; rights, member_limit with join requests, dates and limits refused as Telegram does', async () => {
    const s = await setup();
    const expire = Math.floor(Date.now() / 1000) + 3600;
    const link = await s.api.createChatInviteLink(s.chat.id, { name: `tenure ${'x'.repeat(40)}`, expire_date: expire, member_limit: 1 });
    expect(link).toEqual({
      invite_link: expect.stringMatching(/^https:\/\/t\.me\/\+[A-Za-z0-9_-]{16}$/),
      creator: { id: s.bot.id, is_bot: true, first_name: 'Tenure test bot', username: 'tenure_members_bot' },
      name: `tenure ${'x'.repeat(25)}`,
      expire_date: expire,
      member_limit: 1,
      creates_join_request: false,
      is_primary: false,
      is_revoked: false,
    });
    expect(s.fake.links(s.chat.id)).toEqual([expect.objectContaining({ invite_link: link.invite_link, creator_id: s.bot.id, member_limit: 1, uses: [], pending: [] })]);

    expect(await failure(s.api.createChatInviteLink(s.chat.id, { member_limit: 1, creates_join_request: true }))).toEqual(
      badRequest("member limit can't be specified for links requiring administrator approval"),
    );
    expect(await failure(s.api.createChatInviteLink(s.chat.id, { expire_date: 1 }))).toEqual(badRequest('EXPIRE_DATE_INVALID'));
    expect(await failure(s.api.createChatInviteLink(s.chat.id, { member_limit: 100_000 }))).toEqual(badRequest('USAGE_LIMIT_INVALID'));
    s.fake.setBot(s.chat.id, s.bot.id, 'admin', { can_invite_users: false });
    expect(await failure(s.api.createChatInviteLink(s.chat.id))).toEqual(badRequest('not enough rights to manage chat invite link'));
    s.fake.setBot(s.chat.id, s.bot.id, 'member');
    expect(await failure(s.api.createChatInviteLink(s.chat.id))).toEqual(badRequest('not enough rights to manage chat invite link'));
    expect(s.fake.links(s.chat.id)).toHaveLength(1);
  });

  it('joins through links: member_limit counts members still in, expired, revoked, banned and unknown links are refused', async () => {
    const s = await setup();
    const [ann, bob, cat] = [s.user(), s.user(), s.user()];
    const single = await s.api.createChatInviteLink(s.chat.id, { member_limit: 1, expire_date: Math.floor(Date.now() / 1000) + 60 });
    expect(s.fake.join(ann, single.invite_link)).toEqual({ result: 'joined' });
    expect(s.fake.status(s.chat.id, ann)).toBe('member');
    expect(s.fake.join(bob, single.invite_link)).toEqual({ result: 'refused', reason: 'used_up' });
    s.fake.leave(s.chat.id, ann);
    expect(s.fake.join(bob, single.invite_link)).toEqual({ result: 'joined' });
    expect(s.fake.links(s.chat.id)[0]!.uses).toEqual([ann, bob]);

    const other = await s.api.createChatInviteLink(s.chat.id);
    s.fake.banByAdmin(s.chat.id, cat);
    expect(s.fake.join(cat, other.invite_link)).toEqual({ result: 'refused', reason: 'banned' });
    expect(s.fake.join(cat, 'https://t.me/+unknown')).toEqual({ result: 'refused', reason: 'unknown_link' });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    expect(s.fake.join(s.user(), single.invite_link)).toEqual({ result: 'refused', reason: 'expired' });
    vi.useRealTimers();

    expect(await s.api.revokeChatInviteLink(s.chat.id, other.invite_link)).toMatchObject({ invite_link: other.invite_link, is_revoked: true });
    expect(s.fake.join(s.user(), other.invite_link)).toEqual({ result: 'refused', reason: 'revoked' });
    // Only the bot's own links: another bot's, or an unknown one, is an expired hash to it.
    const second = s.fake.addBot();
    s.fake.setBot(s.chat.id, second.id, 'admin');
    const theirs = await new Api(second.token, { apiRoot: s.fake.url }).createChatInviteLink(s.chat.id);
    expect(await failure(s.api.revokeChatInviteLink(s.chat.id, theirs.invite_link))).toEqual(badRequest('INVITE_HASH_EXPIRED'));
    expect(await failure(s.api.revokeChatInviteLink(s.chat.id, 'https://t.me/+nothing'))).toEqual(badRequest('INVITE_HASH_EXPIRED'));
  });

  it('banChatMember and unbanChatMember: rights, owner and administrators refused, until_date, only_if_banned', async () => {
    const s = await setup();
    const [owner, admin, member, other] = [s.user(), s.user(), s.user(), s.user()];
    s.fake.setOwner(s.chat.id, owner);
    s.fake.setOwner(s.chat.id, admin);
    s.fake.setOwner(s.chat.id, owner); // admin stays an administrator after handing ownership back
    s.fake.addMember(s.chat.id, member);
    expect(await failure(s.api.banChatMember(s.chat.id, owner))).toEqual(badRequest("can't remove chat owner"));
    expect(await failure(s.api.banChatMember(s.chat.id, admin))).toEqual(badRequest('user is an administrator of the chat'));

    expect(await s.api.banChatMember(s.chat.id, member, { until_date: Math.floor(Date.now() / 1000) + 10 })).toBe(true);
    expect(await s.api.getChatMember(s.chat.id, member)).toMatchObject({ status: 'kicked', until_date: 0 }); // under 30 s: forever
    const until = Math.floor(Date.now() / 1000) + 3600;
    await s.api.banChatMember(s.chat.id, other, { until_date: until, revoke_messages: true });
    expect(await s.api.getChatMember(s.chat.id, other)).toMatchObject({ status: 'kicked', until_date: until });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((until + 1) * 1000);
    expect(s.fake.status(s.chat.id, other)).toBe('left');
    vi.useRealTimers();

    expect(await s.api.unbanChatMember(s.chat.id, member, { only_if_banned: true })).toBe(true);
    expect(s.fake.status(s.chat.id, member)).toBe('left');
    s.fake.addMember(s.chat.id, member);
    await s.api.unbanChatMember(s.chat.id, member, { only_if_banned: true });
    expect(s.fake.status(s.chat.id, member)).toBe('member');
    await s.api.unbanChatMember(s.chat.id, member); // the docs: without only_if_banned a member is removed
    expect(s.fake.status(s.chat.id, member)).toBe('left');

    s.fake.setBot(s.chat.id, s.bot.id, 'admin', { can_restrict_members: false });
    expect(await failure(s.api.banChatMember(s.chat.id, member))).toEqual(badRequest('not enough rights to restrict/unrestrict chat member'));
    const group = s.fake.addChat({ type: 'group' });
    s.fake.setBot(group.id, s.bot.id, 'admin');
    expect(await failure(s.api.unbanChatMember(group.id, member))).toEqual(badRequest('method is available for supergroup and channel chats only'));
  });

  it('join requests: chat_join_request by default, approve admits with via_join_request, decline and missing requests', async () => {
    const s = await setup();
    await s.updates(); // the bot's own promotion (my_chat_member)
    const [ann, bob] = [s.user(), s.user()];
    const link = await s.api.createChatInviteLink(s.chat.id, { creates_join_request: true, name: 'paid' });
    expect(s.fake.join(ann, link.invite_link)).toEqual({ result: 'requested' });
    expect(s.fake.join(bob, link.invite_link)).toEqual({ result: 'requested' });
    expect(s.fake.links(s.chat.id)[0]!.pending).toEqual([ann, bob]);
    const [request] = await s.updates({ allowed_updates: ['chat_join_request', 'chat_member'] });
    expect(request!.chat_join_request).toMatchObject({
      chat: { id: s.chat.id, type: 'supergroup', title: 'Members' },
      from: { id: ann, is_bot: false },
      user_chat_id: ann,
      invite_link: { invite_link: link.invite_link, creates_join_request: true, name: 'paid' },
    });

    expect(await s.api.approveChatJoinRequest(s.chat.id, ann)).toBe(true);
    expect(s.fake.status(s.chat.id, ann)).toBe('member');
    const approved = (await s.updates()).map((u) => u.chat_member).filter((u) => u !== undefined);
    expect(approved).toEqual([
      expect.objectContaining({ from: expect.objectContaining({ id: s.bot.id }), via_join_request: true, invite_link: expect.objectContaining({ invite_link: link.invite_link }) }),
    ]);
    expect(approved[0]!.new_chat_member).toMatchObject({ status: 'member', user: { id: ann } });
    expect(await failure(s.api.approveChatJoinRequest(s.chat.id, ann))).toEqual(badRequest('USER_ALREADY_PARTICIPANT'));
    expect(await s.api.declineChatJoinRequest(s.chat.id, bob)).toBe(true);
    expect(await failure(s.api.declineChatJoinRequest(s.chat.id, bob))).toEqual(badRequest('HIDE_REQUESTER_MISSING'));
    expect(await failure(s.api.approveChatJoinRequest(s.chat.id, bob))).toEqual(badRequest('HIDE_REQUESTER_MISSING'));
    s.fake.setBot(s.chat.id, s.bot.id, 'admin', { can_invite_users: false });
    expect(await failure(s.api.approveChatJoinRequest(s.chat.id, bob))).toEqual(badRequest('not enough rights to manage chat join requests'));
  });

  it('chat_member updates only once listed, the setting kept across calls; invite_link full for its creator, masked for other admins, omitted on request', async () => {
    const s = await setup();
    const second = s.fake.addBot();
    s.fake.setBot(s.chat.id, second.id, 'admin');
    const theirs = reader(new Api(second.token, { apiRoot: s.fake.url }));
    const [ann, bob, cat, dan] = [s.user(), s.user(), s.user(), s.user()];
    const link = await s.api.createChatInviteLink(s.chat.id);
    s.fake.join(ann, link.invite_link); // before chat_member is asked for: never created
    const first = await s.updates();
    expect(first.map((u) => Object.keys(u)[1])).toEqual(['my_chat_member']); // its promotion, not the other bot's (a chat_member)
    expect(first[0]!.update_id).toBeGreaterThan(1);

    await s.updates({ allowed_updates: ['chat_member'] });
    await theirs({ allowed_updates: ['chat_member'] });
    s.fake.join(bob, link.invite_link);
    s.fake.omitInviteLinkOnNextJoin();
    s.fake.join(cat, link.invite_link);
    s.fake.addMember(s.chat.id, dan);
    s.fake.addMember(s.chat.id, ann); // already in: no change, no update
    s.fake.leave(s.chat.id, bob);
    const mine = (await s.updates()).map((u) => u.chat_member!); // allowed_updates not repeated: kept
    expect(mine.map((u) => [u.new_chat_member.user.id, u.old_chat_member.status, u.new_chat_member.status, u.invite_link?.invite_link])).toEqual([
      [bob, 'left', 'member', link.invite_link],
      [cat, 'left', 'member', undefined],
      [dan, 'left', 'member', undefined],
      [bob, 'member', 'left', undefined],
    ]);
    expect(mine[0]).toMatchObject({ chat: { id: s.chat.id }, from: { id: bob }, date: expect.any(Number) });
    expect(mine[2]!.from.first_name).toBe('Owner'); // added by a human admin
    const seen = (await theirs()).map((u) => u.chat_member!);
    expect(seen[0]!.invite_link).toMatchObject({ invite_link: `${link.invite_link.slice(0, 22)}…`, creator: { id: s.bot.id } });
  });

  it('getUpdates: offsets confirm, a negative one keeps the last, limit, a long poll answered at once, 409 for a second poller', async () => {
    const s = await setup();
    for (let i = 0; i < 3; i++) s.fake.leave(s.chat.id, s.user()); // nothing: they were never in
    s.fake.setBot(s.chat.id, s.bot.id, 'member');
    s.fake.setBot(s.chat.id, s.bot.id, 'admin');
    const all = await s.api.getUpdates({ limit: 2 });
    expect(all.map((u) => u.my_chat_member?.new_chat_member.status)).toEqual(['administrator', 'member']);
    expect(all[1]!.update_id).toBe(all[0]!.update_id + 1);
    expect(await s.api.getUpdates({ offset: -1 })).toEqual([expect.objectContaining({ update_id: all[1]!.update_id + 1 })]);
    expect(await s.api.getUpdates({ offset: all[1]!.update_id + 2 })).toEqual([]);

    const started = Date.now();
    const poll = s.api.getUpdates({ timeout: 20 });
    setTimeout(() => s.fake.setBot(s.chat.id, s.bot.id, 'member'), 50);
    expect((await poll).map((u) => u.my_chat_member?.new_chat_member.status)).toEqual(['member']);
    expect(Date.now() - started).toBeLessThan(2_000);

    const waiting = failure(s.api.getUpdates({ offset: (await poll)[0]!.update_id + 1, timeout: 20 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await s.api.getUpdates({ offset: (await poll)[0]!.update_id + 1 })).toEqual([]);
    expect(await waiting).toEqual({
      error_code: 409,
      description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      parameters: {},
    });
  });

  it('webhooks: updates POSTed with the secret token, retried after non-2xx, getWebhookInfo, getUpdates refused meanwhile', async () => {
    const s = await setup({ webhookRetryMs: 10 });
    const hook = await receiver([500, 502]);
    expect(await s.api.setWebhook(hook.url, { secret_token: 'tenure-Secret_1', allowed_updates: ['chat_member', 'my_chat_member'] })).toBe(true);
    // One setWebhook with a URL per second.
    expect(await failure(s.api.setWebhook(hook.url))).toEqual({ error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } });
    const other = new Api(s.fake.addBot().token, { apiRoot: s.fake.url });
    expect(await failure(other.setWebhook(hook.url, { secret_token: 'not allowed!' }))).toEqual(badRequest('secret token contains unallowed characters'));
    expect(await failure(s.api.getUpdates())).toMatchObject({
      error_code: 409,
      description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    });

    // The queued my_chat_member (promotion) fails twice, then arrives; then a join.
    await until(() => hook.got.length === 3);
    const user = s.user();
    s.fake.join(user, (await s.api.createChatInviteLink(s.chat.id)).invite_link);
    await until(() => hook.got.length === 4);
    await drained(s.api);
    expect(hook.got.map((g) => g.headers['x-telegram-bot-api-secret-token'])).toEqual(Array(4).fill('tenure-Secret_1'));
    expect(hook.got[0]!.body).toEqual(hook.got[2]!.body);
    expect(hook.got[3]!.body.chat_member).toMatchObject({ new_chat_member: { status: 'member', user: { id: user } } });
    expect(hook.got[3]!.body.update_id).toBe(hook.got[0]!.body.update_id + 1);
    expect(await s.api.getWebhookInfo()).toMatchObject({
      url: hook.url,
      last_error_message: 'Wrong response from the webhook: 502 Bad Gateway',
      allowed_updates: ['chat_member', 'my_chat_member'],
    });

    s.fake.leave(s.chat.id, user);
    await until(() => hook.got.length === 5);
    expect(await s.api.deleteWebhook({ drop_pending_updates: true })).toBe(true);
    expect(await s.api.getWebhookInfo()).toEqual({ url: '', has_custom_certificate: false, pending_update_count: 0, allowed_updates: ['chat_member', 'my_chat_member'] });
    expect(await s.api.getUpdates()).toEqual([]);
  });

  it('webhooks: an update still refused after webhookAttempts is dropped, and the next one follows', async () => {
    const s = await setup({ webhookAttempts: 2, webhookRetryMs: 10 });
    const hook = await receiver([500, 500]);
    await s.api.setWebhook(hook.url);
    s.fake.setBot(s.chat.id, s.bot.id, 'member');
    await until(() => hook.got.length === 3);
    expect(hook.got.map((g) => g.body.my_chat_member?.new_chat_member.status)).toEqual(['administrator', 'administrator', 'member']);
    expect(hook.got[0]!.headers['x-telegram-bot-api-secret-token']).toBeUndefined();
    await drained(s.api);
  });

  it('rate limits: 429 with retry_after past the per-bot or per-chat rate, refused again until it passes', async () => {
    const s = await setup({ globalPerSecond: 5, chatPerSecond: 2 });
    await s.api.getChat(s.chat.id);
    await s.api.getChat(s.chat.id);
    const error = await s.api.getChat(s.chat.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrammyError);
    const limited = error as GrammyError;
    expect([limited.error_code, limited.description, limited.parameters.retry_after]).toEqual([429, 'Too Many Requests: retry after 1', 1]);
    expect(await failure(s.api.getChat(s.chat.id))).toMatchObject({ error_code: 429, parameters: { retry_after: 1 } });

    for (let i = 0; i < 3; i++) await s.api.getMe(); // refused calls do not count: these are the 3rd to 5th
    expect(await failure(s.api.getMe())).toMatchObject({ error_code: 429, description: 'Too Many Requests: retry after 1' });
    expect(s.fake.calls.map((c) => c.status)).toEqual([200, 200, 429, 429, 200, 200, 200, 429]);
  });

  it('failNext answers the next calls (of one method) with the given error, retry_after as parameters', async () => {
    const s = await setup();
    s.fake.failNext(1, { error_code: 429, description: 'Too Many Requests: retry after 7', retry_after: 7 }, 'banChatMember');
    s.fake.failNext(1, { error_code: 500, description: 'Internal Server Error' });
    expect(await failure(s.api.getMe())).toEqual({ error_code: 500, description: 'Internal Server Error', parameters: {} });
    expect((await s.api.getMe()).id).toBe(s.bot.id);
    const user = s.user();
    expect(await failure(s.api.banChatMember(s.chat.id, user))).toEqual({ error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } });
    expect(s.fake.status(s.chat.id, user)).toBe('left');
    expect(await s.api.banChatMember(s.chat.id, user)).toBe(true);
    expect(s.fake.calls.at(-2)).toMatchObject({ method: 'banChatMember', botId: s.bot.id, status: 429, params: { chat_id: s.chat.id, user_id: user } });
  });
});
