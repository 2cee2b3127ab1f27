import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { useTelegramWorkers } from '../support/telegram.js';
import { buttonsOf, messagesIn, useTalkingBot } from '../support/telegram-conversation.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * The bot hands members their own pay links (docs/front-desk.md, "Telegram: the bot conversation"),
 * through the real app and the fake Bot API: a plan button makes a link for the Telegram user who
 * pressed it, and `/start {pay_link_id}` shows a link again only to the member it was made for.
 */

describe('Telegram: pay links in the bot conversation', () => {
  const h = useHarness();
  const talking = useTalkingBot(h, useTelegramWorkers(h));
  const payLinkId = (url: string) => url.split('/pay/')[1]!;

  it('a plan button is answered, then the member gets a message with a URL button to a pay link made for them', async () => {
    const { p, botId } = await talking();
    const member = h.telegram.addUser();
    h.telegram.say(member.id, botId, '/start');
    const [menu] = await messagesIn(h, botId, member.id, 1);

    const { callback_query_id } = h.telegram.press(member.id, botId, member.id, menu!.message_id, `plan:${p.plan.plan_id}`);

    const [, offer] = await messagesIn(h, botId, member.id, 2);
    await eventually(() => h.telegram.callbackAnswers(botId).length === 1, 'the button answered');
    expect(h.telegram.callbackAnswers(botId)).toStrictEqual([{ callback_query_id, show_alert: false }]);
    const [[[label, url]]] = buttonsOf(offer) as [[[string, string]]];
    expect(label).toBe('Pay now');
    expect(url).toMatch(new RegExp(`^${h.container.config.frontDesk.publicUrl}/pay/[A-Za-z0-9_-]+$`));
    expect(offer!.text).toMatch(new RegExp(`^Here is your payment link for “${p.plan.plan_name}”\\. It is yours alone and works until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\.`));
    const link = await h.container.services.payLinks.find(p.t.projectId, payLinkId(url));
    expect(link).toMatchObject({ plan_id: p.plan.plan_id, user_id: String(member.id), url, open: true });
  });

  it('/start {pay_link_id} resumes the member’s own link; another user gets a refusal and no link', async () => {
    const { p, botId } = await talking();
    const member = h.telegram.addUser();
    const stranger = h.telegram.addUser();
    const made = await h.container.services.payLinks.create(p.t.projectId, { planId: p.plan.plan_id, userId: String(member.id) });
    if (!made.ok) throw made.error;

    h.telegram.say(member.id, botId, `/start ${made.value.pay_link_id}`);
    h.telegram.say(stranger.id, botId, `/start ${made.value.pay_link_id}`);

    const [resumed] = await messagesIn(h, botId, member.id, 1);
    expect(buttonsOf(resumed)).toStrictEqual([[['Pay now', made.value.url]]]);
    const [refused] = await messagesIn(h, botId, stranger.id, 1);
    expect(refused!.text).toBe('This payment link has expired or is not yours. Send /start to choose a plan and get a link of your own.');
    expect(refused!.reply_markup).toBeUndefined();
  });
});
