import { beforeAll, describe, expect, it } from 'vitest';
import { createTelegramApi, grammy } from '../../src/access/telegram/api.js';
import { TelegramWebhookSecrets } from '../../src/domain/integrations/telegram-webhook-secret.js';
import { eventRows, expectError, expectSuccess } from '../support/api.js';
import { useHarness, type Harness } from '../support/harness.js';
import { eventsOf, rowOf, telegramMember, telegramProject, useTelegramWorkers, type TelegramProject } from '../support/telegram.js';
import { chatMemberUpdate, inviteRow, joinRequestUpdate, updateRows, useTelegramUpdates } from '../support/telegram-updates.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * The bot's updates by webhook (TENURE_TELEGRAM_UPDATES=webhook; docs/access-telegram.md):
 * `POST /telegram/updates/{project_id}` through the real app, listening on 127.0.0.1 so that the
 * fake Bot API can post to it. The worker holding the bot sets the webhook with the bot's secret
 * token; a delivery without it is refused with nothing stored; bad input gets the envelope and
 * changes nothing; a repeat is stored once. Long polling is in telegram-updates.test.ts.
 */

const WEBHOOK_ENV = { TENURE_TELEGRAM_UPDATES: 'webhook', TENURE_TELEGRAM_WEBHOOK_URL: 'http://127.0.0.1:9' };

const pathOf = (projectId: string) => `/telegram/updates/${projectId}`;
const tokenOf = (h: Harness, p: TelegramProject) => TelegramWebhookSecrets.of(h.container.secretBox)!.tokenFor(p.t.projectId, p.bot.id);

function post(h: Harness, projectId: string, payload: unknown, secret?: string, headers: Record<string, string> = {}) {
  const secretHeader = secret === undefined ? {} : { 'x-telegram-bot-api-secret-token': secret };
  // A string is sent as it is (malformed JSON); anything else as JSON.
  const body = typeof payload === 'string' ? { body: payload } : { payload: payload as object };
  return h.app.inject({ method: 'POST', url: pathOf(projectId), headers: { 'content-type': 'application/json', ...secretHeader, ...headers }, ...body });
}

describe('Telegram updates by webhook', () => {
  const h = useHarness({ env: WEBHOOK_ENV });
  const worker = useTelegramWorkers(h);
  const listen = useTelegramUpdates(h);
  let base: string;
  beforeAll(async () => {
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('the holder sets the webhook with the bot’s secret token; Telegram’s deliveries are handled', async () => {
    const p = await telegramProject(h);
    const w = worker();
    // No poll of the inbox within the test: only the route's commit can wake the holder.
    listen(w, { mode: 'webhook', webhookUrl: base, options: { inboxPollMs: 60_000 } });
    w.start();
    // grammY is loaded at first use (src/lazy-library.ts): the worker may not have taken the bot yet.
    await grammy.load();
    const api = createTelegramApi(p.bot.token, h.telegram.url);
    await eventually(async () => (await api.getWebhookInfo()).url !== '', 'the webhook set');
    expect(await api.getWebhookInfo()).toMatchObject({
      url: `${base}${pathOf(p.t.projectId)}`,
      max_connections: 1,
      allowed_updates: ['chat_member', 'chat_join_request', 'my_chat_member', 'message', 'callback_query'],
    });
    expect(h.telegram.calls.find((c) => c.method === 'setWebhook' && c.botId === Number(p.bot.id))!.params).toMatchObject({ secret_token: tokenOf(h, p) });

    const m = await telegramMember(h, p);
    await eventually(async () => (await rowOf(h, p, m)).state === 'waiting_for_member', 'a link');
    const link = h.telegram.links(p.chatId)[0]!.invite_link;
    expect(h.telegram.join(m.id, link)).toStrictEqual({ result: 'joined' });

    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'delivered and handled');
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toStrictEqual([{ user_id: m.userId, target_id: p.target.target_id, platform: 'telegram' }]);
    expect(await inviteRow(h, link)).toMatchObject({ used_by: m.userId });
    // Every delivery was answered 2xx: nothing for Telegram to retry.
    expect((await api.getWebhookInfo()).last_error_message).toBeUndefined();
  });

  it('stores a delivery with the bot’s secret once: a repeat is answered and changes nothing', async () => {
    const p = await telegramProject(h);
    const member = chatMemberUpdate(p.chatId, 77, 'left', 'member');
    const update = { update_id: 4242, ...member };

    expectSuccess(await post(h, p.t.projectId, update, tokenOf(h, p)), {
      method: 'POST',
      path: pathOf(p.t.projectId),
      message: 'Update stored',
      data: { update_id: 4242, result: 'stored' },
    });
    const stored = await updateRows(h, p.t.projectId);
    expect(stored).toStrictEqual([{ bot_id: p.bot.id, update_id: 4242, payload: update, handled: false }]);

    expectSuccess(await post(h, p.t.projectId, { ...update, chat_member: { ...(member.chat_member as object), date: 1 } }, tokenOf(h, p)), {
      method: 'POST',
      path: pathOf(p.t.projectId),
      message: 'Update received already',
      data: { update_id: 4242, result: 'duplicate' },
    });
    expect(await updateRows(h, p.t.projectId)).toStrictEqual(stored);
  });

  it('answers a kind tenure does not ask for, and a message said in a group, with 200, and keeps nothing of them', async () => {
    const p = await telegramProject(h);
    const from = { id: 77, is_bot: false, first_name: 'User 77' };
    const unasked = { update_id: 5, edited_message: { message_id: 1, text: 'hello', chat: { id: 77, type: 'private' }, date: 1, edit_date: 2 } };
    const inGroup = { update_id: 6, message: { message_id: 2, from, text: '/start', chat: { id: p.chatId, type: 'supergroup', title: 'chat' }, date: 1 } };
    for (const update of [unasked, inGroup]) {
      expectSuccess(await post(h, p.t.projectId, update, tokenOf(h, p)), {
        method: 'POST',
        path: pathOf(p.t.projectId),
        message: 'Update ignored: tenure asks only for chat_member, chat_join_request, my_chat_member, and messages and button presses in the bot’s private chats',
        data: { update_id: update.update_id, result: 'ignored' },
      });
    }
    expect(await updateRows(h, p.t.projectId)).toStrictEqual([]);
  });

  it('refuses a delivery without the bot’s secret token with 401, before reading it, and stores nothing', async () => {
    const p = await telegramProject(h);
    const other = await telegramProject(h);
    const update = { update_id: 9, ...joinRequestUpdate(p.chatId, 77) };
    const refusals = [
      ['no token', post(h, p.t.projectId, update)],
      ['an empty token', post(h, p.t.projectId, update, '')],
      ['another bot’s token', post(h, p.t.projectId, update, tokenOf(h, other))],
      ['a token one character short', post(h, p.t.projectId, update, tokenOf(h, p).slice(0, -1))],
      ['a bad token and a bad body', post(h, p.t.projectId, '{not json', 'x')],
      ['a project that is no UUID', post(h, 'not-a-project', update, tokenOf(h, p))],
    ] as const;
    for (const [what, sent] of refusals) {
      const res = await sent;
      expect(res.statusCode, `${what}: ${res.body}`).toBe(401);
      expectError(res, { status: 401, code: 'UNAUTHORIZED', method: 'POST', path: res.json().path });
    }
    const unconnected = await h.tenant();
    expect((await post(h, unconnected.projectId, update, tokenOf(h, p))).statusCode).toBe(401);
    expect(await updateRows(h, p.t.projectId)).toStrictEqual([]);
  });

  it('answers bad input with the envelope (400, 415, 422) and stores nothing', async () => {
    const p = await telegramProject(h);
    const token = tokenOf(h, p);
    const path = pathOf(p.t.projectId);
    const member = chatMemberUpdate(p.chatId, 77, 'left', 'member');
    expectError(await post(h, p.t.projectId, '{"update_id": 1,', token), { status: 400, code: 'BAD_REQUEST', method: 'POST', path });
    expectError(await post(h, p.t.projectId, 'update_id=1', token, { 'content-type': 'text/plain' }), { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', method: 'POST', path });
    const invalid: [unknown, string][] = [
      [{ ...member }, 'update_id is required'],
      [{ update_id: '1', ...member }, 'update_id must be a non-negative integer'],
      [{ update_id: -1, ...member }, 'update_id must be a non-negative integer'],
      [[1], 'body must be object'],
      [{ update_id: 1, chat_member: { ...(member.chat_member as object), chat: { id: 'x' } } }, 'chat_member.chat.id must be an integer'],
      [{ update_id: 1, ...member, ...joinRequestUpdate(p.chatId, 77) }, 'An update carries one of chat_member, chat_join_request, my_chat_member, message, callback_query, not several (this one: chat_member, chat_join_request)'],
      [{ update_id: 1, message: { message_id: 1, chat: { id: 'x' }, date: 1 } }, 'message.chat.id must be an integer'],
    ];
    for (const [body, message] of invalid) {
      expectError(await post(h, p.t.projectId, body, token), { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message });
    }
    expect(await updateRows(h, p.t.projectId)).toStrictEqual([]);
    expect((await eventRows(h, p.t.projectId)).filter((e) => e.type.startsWith('access.'))).toStrictEqual([]);
  });
});

/** Every key path of a JSON value. */
function pathsOf(value: unknown, at: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return at.length > 0 ? [at] : [];
  const inner = Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...at, key]));
  return at.length > 0 ? [at, ...inner] : inner;
}

/** `value` with the field at `path` set to `to` (a copy). */
function withField(value: object, path: string[], to: unknown): Record<string, unknown> {
  const copy = structuredClone(value) as Record<string, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1]!] = to;
  return copy;
}

/** Values a field of an update never holds, and some it might. */
const EDGE_VALUES: unknown[] = ['', '\u0000', '\uD800', '-1', 'x'.repeat(5000), -1, 1.5, 2 ** 53, 1e308, null, true, [], {}];

describe('Telegram updates by webhook: whatever is posted', () => {
  const h = useHarness({ env: WEBHOOK_ENV });

  it('never answers a 5xx: each field of each kind set to each edge value is stored, dropped, or refused with nothing stored', async () => {
    const p = await telegramProject(h);
    const token = tokenOf(h, p);
    const valid = [
      chatMemberUpdate(p.chatId, 77, 'left', 'member', { inviteLink: 'https://t.me/+abcdefgh12345678' }),
      joinRequestUpdate(p.chatId, 78, 'https://t.me/+abcdefgh12345678'),
      chatMemberUpdate(p.chatId, Number(p.bot.id), 'administrator', 'member', { kind: 'my_chat_member' }),
    ];
    let updateId = 1000;
    let stored = 0;
    for (const update of valid) {
      const base = { update_id: 0, ...update };
      for (const path of pathsOf(base)) {
        for (const value of EDGE_VALUES) {
          const body = withField({ ...base, update_id: ++updateId }, path, value);
          const res = await post(h, p.t.projectId, body, token);
          expect(res.statusCode, `${path.join('.')} = ${JSON.stringify(value)?.slice(0, 40)}: ${res.body}`).toBeLessThan(500);
          if (res.statusCode === 200 && res.json().data.result === 'stored') stored++;
          else expect([200, 400, 422], res.body).toContain(res.statusCode);
        }
      }
    }
    expect(await updateRows(h, p.t.projectId)).toHaveLength(stored);
    expect(stored).toBeGreaterThan(0);
  });
});

describe('Telegram updates by long polling: the webhook route', () => {
  const h = useHarness();

  it('is not there (404): nothing is posted to an instance that polls', async () => {
    const p = await telegramProject(h);
    const update = { update_id: 1, ...chatMemberUpdate(p.chatId, 77, 'left', 'member') };
    expectError(await post(h, p.t.projectId, update, tokenOf(h, p)), {
      status: 404,
      code: 'NOT_FOUND',
      method: 'POST',
      path: pathOf(p.t.projectId),
      message: 'Telegram updates are received by long polling on this instance (TENURE_TELEGRAM_UPDATES=polling): nothing is posted here',
    });
    expect(await updateRows(h, p.t.projectId)).toStrictEqual([]);
  });
});
