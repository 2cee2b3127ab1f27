import type { MembershipView } from '../memberships/membership.view.js';
import type { PlanView } from '../plans/plan.view.js';

/**
 * What the bot says (docs/front-desk.md, "Telegram: the bot conversation"): short, friendly, each
 * message ending with what to do next. Plain text (no parse_mode), so a plan's name is shown as
 * the owner wrote it and needs no escaping.
 */

/** An inline keyboard button (Bot API InlineKeyboardButton): a callback button or a URL button. */
export type InlineButton = { text: string; callback_data: string } | { text: string; url: string };

/** A Bot API call the conversation makes. */
export type TelegramReply =
  | { method: 'sendMessage'; chatId: string; text: string; keyboard?: InlineButton[][] }
  /** Stops the button's spinner; `text`, when given, shows as a short notice (0-200 characters). */
  | { method: 'answerCallbackQuery'; callbackQueryId: string; text?: string };

/** A plan button's callback_data: `plan:` and the plan's UUID, 41 bytes (Telegram allows 64). */
export const planButtonData = (planId: string): string => `plan:${planId}`;
export const planOfButton = (data: string): string | null => (/^plan:([0-9a-f-]{36})$/i.exec(data)?.[1] ?? null);

/** An instant as members read it: `2030-01-01 00:00 UTC`. */
export const readable = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

const priceOf = (plan: PlanView): string => `${plan.plan_price_formatted} / ${plan.plan_duration}`;

const send = (chatId: string, text: string, keyboard?: InlineButton[][]): TelegramReply => ({ method: 'sendMessage', chatId, text, ...(keyboard ? { keyboard } : {}) });

export const replies = {
  plans(chatId: string, plans: readonly PlanView[]): TelegramReply {
    if (plans.length === 0) return send(chatId, 'Hi! There is nothing to join here yet. Please check back later.');
    const keyboard = plans.map((p) => [{ text: `${p.plan_name}: ${priceOf(p)}`, callback_data: planButtonData(p.plan_id) }]);
    return send(chatId, 'Hi! Choose a plan below to get your payment link.\nSend /status any time to see your memberships.', keyboard);
  },

  payLink(chatId: string, plan: { plan_name: string } | null, link: { url: string; expires_at: string }): TelegramReply {
    const what = plan ? `“${plan.plan_name}”` : 'your plan';
    return send(chatId, `Here is your payment link for ${what}. It is yours alone and works until ${readable(link.expires_at)}.\nTap the button to pay; you get access as soon as the payment goes through.`, [
      [{ text: 'Pay now', url: link.url }],
    ]);
  },

  linkNotUsable(chatId: string): TelegramReply {
    return send(chatId, 'This payment link has expired or is not yours. Send /start to choose a plan and get a link of your own.');
  },

  planGone(chatId: string): TelegramReply {
    return send(chatId, 'That plan is not available any more. Send /start to see the current plans.');
  },

  cannotSell(chatId: string): TelegramReply {
    return send(chatId, 'Sorry, this plan cannot be bought right now. Please try again later.');
  },

  /** `portal`: the member's portal link, shown as a button (single use, short-lived). */
  memberships(chatId: string, items: readonly MembershipView[], total: number, portal: { url: string } | null = null): TelegramReply {
    if (items.length === 0) return send(chatId, 'You have no memberships yet. Send /start to choose a plan.');
    const lines = items.map((m) => {
      const plan = m.plan_name ?? 'Membership';
      const end = readable(m.membership_end_date);
      return m.status === 'active' ? `• ${plan}: active until ${end}` : `• ${plan}: ended ${end}`;
    });
    const more = total > items.length ? [`…and ${total - items.length} older.`] : [];
    const next = portal
      ? 'Tap “Manage” for your payments and billing, or send /start to renew or to choose another plan.'
      : 'Send /start to renew or to choose another plan.';
    return send(chatId, ['Your memberships:', ...lines, ...more, '', next].join('\n'), portal ? [[{ text: 'Manage', url: portal.url }]] : undefined);
  },

  help(chatId: string): TelegramReply {
    return send(chatId, 'Send /start to see the plans and get a payment link, or /status to see your memberships.');
  },
};
