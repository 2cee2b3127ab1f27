import { beforeAll, describe, expect, it } from 'vitest';
import { createMembership } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';
import { callsFrom, useTelegramWorkers } from '../support/telegram.js';
import { buttonsOf, messagesIn, useTalkingBot } from '../support/telegram-conversation.js';
import { updateRows } from '../support/telegram-updates.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * Members talk to the project's bot (docs/front-desk.md, "Telegram: the bot conversation"), through
 * the real app: the bot connected through the API, its updates polled (or posted to the webhook
 * route) and handled by the loops the worker runtime starts, grammY against the fake Bot API. What
 * the member sees is read from the fake: the messages the bot sent in their chat, with their inline
 * keyboards. Pay links are in telegram-conversation.pay-links.test.ts.
 */

describe('Telegram: the bot conversation', () => {
  const h = useHarness();
  const talking = useTalkingBot(h, useTelegramWorkers(h));

  it('/start lists the plans granting a Telegram target as an inline keyboard of plan buttons', async () => {
    const { p, botId } = await talking();
    // A plan granting nothing on Telegram is not offered here.
    await createPlan(p.t, { plan_name: 'Web only' });
    const member = h.telegram.addUser();

    h.telegram.say(member.id, botId, '/start');

    const [menu] = await messagesIn(h, botId, member.id, 1);
    expect(menu!.text).toBe('Hi! Choose a plan below to get your payment link.\nSend /status any time to see your memberships.');
    expect(buttonsOf(menu)).toStrictEqual([[[`${p.plan.plan_name}: ${p.plan.plan_price_formatted} / ${p.plan.plan_duration}`, `plan:${p.plan.plan_id}`]]]);
  });

  it('/status and /memberships list the member’s memberships with their end dates; someone with none is told how to start', async () => {
    const { p, botId } = await talking();
    const member = h.telegram.addUser();
    const newcomer = h.telegram.addUser();
    await createMembership(p.t, { userId: String(member.id), planId: p.plan.plan_id, endDate: '2031-06-30T12:00:00.000Z' });

    h.telegram.say(member.id, botId, '/status');
    h.telegram.say(newcomer.id, botId, '/memberships');

    const [status] = await messagesIn(h, botId, member.id, 1);
    expect(status!.text).toBe(
      `Your memberships:\n• ${p.plan.plan_name}: active until 2031-06-30 12:00 UTC\n\nTap “Manage” for your payments and billing, or send /start to renew or to choose another plan.`,
    );
    // The member's portal, a single-use link of their own.
    const [[[label, portal]]] = buttonsOf(status) as [[[string, string]]];
    expect(label).toBe('Manage');
    expect(portal).toMatch(new RegExp(`^${h.container.config.frontDesk.publicUrl}/portal/[A-Za-z0-9_-]+$`));
    const [none] = await messagesIn(h, botId, newcomer.id, 1);
    expect(none!.text).toBe('You have no memberships yet. Send /start to choose a plan.');
    expect(none!.reply_markup).toBeUndefined();
  });

  it('anything else said privately gets a short help; in a group the bot says nothing and keeps nothing', async () => {
    const { p, botId } = await talking();
    const member = h.telegram.addUser();
    h.telegram.addMember(p.chatId, member.id);

    h.telegram.say(member.id, botId, '/start', { chatId: p.chatId });
    h.telegram.say(member.id, botId, 'hello there', { chatId: p.chatId });
    h.telegram.say(member.id, botId, 'hello');

    const [help] = await messagesIn(h, botId, member.id, 1);
    expect(help!.text).toBe('Send /start to see the plans and get a payment link, or /status to see your memberships.');
    expect(h.telegram.messages(botId, p.chatId)).toStrictEqual([]);
    const messages = (await updateRows(h, p.t.projectId)).filter((u) => 'message' in u.payload);
    expect(messages.map((u) => (u.payload.message as { chat: { id: number } }).chat.id)).toStrictEqual([member.id]);
  });

  it('a member who blocked the bot: the refusal is logged once, the update handled, and the reply never sent again', async () => {
    const { p, botId, logs } = await talking();
    const member = h.telegram.addUser();
    const other = h.telegram.addUser();
    const calls = callsFrom(h.telegram, p.bot);

    // They ask, then block the bot before it answers (both reach the bot in one batch).
    h.telegram.say(member.id, botId, '/status');
    h.telegram.setBlocked(member.id, botId, true);
    await eventually(async () => (await updateRows(h, p.t.projectId)).length >= 2 && (await updateRows(h, p.t.projectId)).every((u) => u.handled), 'both updates handled');
    // Another member's conversation goes on, and a while passes: nothing more is tried for the first.
    h.telegram.say(other.id, botId, '/status');
    await messagesIn(h, botId, other.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const sends = calls.since().filter((c) => c.method === 'sendMessage' && Number(c.params.chat_id) === member.id);
    expect(sends.map((c) => c.status)).toStrictEqual([403]);
    expect(h.telegram.messages(botId, member.id)).toStrictEqual([]);
    const refusals = logs.filter((l) => l.userId === String(member.id));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ level: 40, projectId: p.t.projectId, kind: 'command', refused: [{ method: 'sendMessage', failure: { code: '403', description: 'Forbidden: bot was blocked by the user' } }] });
    expect(JSON.stringify(logs)).not.toContain(p.bot.token);
  });

  it('each update is answered once, across a restart of the worker', async () => {
    const { p, botId, stop, again } = await talking();
    const member = h.telegram.addUser();

    h.telegram.say(member.id, botId, '/status');
    await messagesIn(h, botId, member.id, 1);
    await stop();
    await again();
    h.telegram.say(member.id, botId, '/help');

    const messages = await messagesIn(h, botId, member.id, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(h.telegram.messages(botId, member.id).map((m) => m.text.split('\n')[0])).toStrictEqual([
      'You have no memberships yet. Send /start to choose a plan.',
      'Send /start to see the plans and get a payment link, or /status to see your memberships.',
    ]);
    expect(messages).toHaveLength(2);
    const stored = (await updateRows(h, p.t.projectId)).filter((u) => 'message' in u.payload);
    expect(stored.map((u) => u.handled)).toStrictEqual([true, true]);
  });
});

describe('Telegram: the bot conversation by webhook', () => {
  const h = useHarness({ env: { TENURE_TELEGRAM_UPDATES: 'webhook', TENURE_TELEGRAM_WEBHOOK_URL: 'http://127.0.0.1:9' } });
  const talking = useTalkingBot(h, useTelegramWorkers(h));
  let base: string;
  beforeAll(async () => {
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('a private message posted to the webhook route is answered once, a repeated delivery stored once', async () => {
    const { p, botId } = await talking({ mode: 'webhook', webhookUrl: base });
    await eventually(() => h.telegram.calls.some((c) => c.method === 'setWebhook' && c.botId === botId && c.status === 200), 'the webhook set');
    const member = h.telegram.addUser();

    h.telegram.say(member.id, botId, '/start');
    const [menu] = await messagesIn(h, botId, member.id, 1);
    expect(buttonsOf(menu)).toStrictEqual([[[`${p.plan.plan_name}: ${p.plan.plan_price_formatted} / ${p.plan.plan_duration}`, `plan:${p.plan.plan_id}`]]]);

    // Telegram delivers the same update again (its answer was lost): stored once, answered once.
    const [stored] = (await updateRows(h, p.t.projectId)).filter((u) => 'message' in u.payload);
    const secret = h.telegram.calls.find((c) => c.method === 'setWebhook' && c.botId === botId)!.params.secret_token as string;
    const res = await h.app.inject({
      method: 'POST',
      url: `/telegram/updates/${p.t.projectId}`,
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
      payload: { update_id: stored!.update_id, ...stored!.payload },
    });
    expect(res.json().data, res.body).toStrictEqual({ update_id: stored!.update_id, result: 'duplicate' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(h.telegram.messages(botId, member.id)).toHaveLength(1);
  });
});
