import type { Result } from '../errors.js';
import type { MembershipView } from '../memberships/membership.view.js';
import type { PlanView } from '../plans/plan.view.js';
import type { Clock } from '../clock.js';
import type { TelegramTalk } from './telegram-talk.js';
import { planOfButton, replies, type TelegramReply } from './telegram-replies.js';

/**
 * The project's Telegram bot talking with a member (docs/front-desk.md, "Telegram: the bot
 * conversation"): what to answer to what they said (telegram-talk.ts), as Bot API calls for the
 * update handler to make (src/access/telegram/update-handling.ts). A pay link is made only for the user who
 * pressed the button or sent the command, from their Telegram id as Telegram gives it, and is shown
 * only in their private chat with the bot; a link opened with `/start {id}` is shown again only to
 * the user it was made for.
 */

/** A pay link as the member is given it. */
export interface PayLinkOffer {
  pay_link_id: string;
  url: string;
  expires_at: string;
}

/** A pay link as stored: who it is for and whether it can still be paid. */
export interface StoredPayLink extends PayLinkOffer {
  plan_id: string;
  user_id: string;
  /** Still payable: not expired, not paid. */
  open: boolean;
}

/** The pay links this needs (src/domain/front-desk/pay-links.service.ts): make one, read one. */
export interface TelegramPayLinks {
  create(projectId: string, input: { planId: string; userId: string }): Promise<Result<PayLinkOffer>>;
  /** The link of this project with that id, whoever it is for; null when there is none. */
  find(projectId: string, payLinkId: string): Promise<StoredPayLink | null>;
}

/** The member's portal (src/domain/front-desk/portal.service.ts): a single-use link to it. */
export interface TelegramPortal {
  create(projectId: string, userId: string): Promise<Result<{ url: string; expires_at: string }>>;
}

/** The statements and services this uses (narrow ports: unit tests give small twins). */
export interface TelegramConversationPorts {
  plans: { list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: PlanView[]; total: number }> };
  memberships: { list(projectId: string, filter: { userId?: string; limit: number; offset: number }): Promise<{ items: MembershipView[]; total: number }> };
  payLinks: TelegramPayLinks;
  portal: TelegramPortal;
  /** A member who talks to the bot is reachable again (docs/front-desk.md, "Confirmations"). */
  reachable?: { clearUnreachable(projectId: string, userId: string, platform: 'telegram'): Promise<boolean> };
}

/**
 * The plans a keyboard shows at most: Telegram draws every row, and a list longer than this is a
 * catalogue, not a choice (the owner's public page lists them all).
 */
export const MAX_PLAN_BUTTONS = 20;
/** The memberships `/status` lists, newest first. */
export const MAX_LISTED_MEMBERSHIPS = 10;
/** A pay link's id as `/start` may carry it: Telegram's start parameter, up to 64 of `A-Za-z0-9_-`. */
const PAY_LINK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What the conversation answered: the replies, and for the log a note (`warn`: the owner should know). */
export interface ConversationAnswer {
  replies: TelegramReply[];
  note: string;
  warn?: boolean;
}

export class TelegramConversation {
  constructor(
    private readonly ports: TelegramConversationPorts,
    private readonly clock: Clock,
  ) {}

  /** The answer to what a member said to the bot of `projectId`; nothing for what is ignored. */
  async answer(projectId: string, talk: TelegramTalk): Promise<ConversationAnswer> {
    if (talk.kind !== 'ignored') await this.ports.reachable?.clearUnreachable(projectId, talk.userId, 'telegram');
    switch (talk.kind) {
      case 'ignored':
        return { replies: [], note: `ignored: ${talk.reason}` };
      case 'chatter':
        return { replies: [replies.help(talk.chatId)], note: 'help' };
      case 'command':
        if (talk.command === 'help') return { replies: [replies.help(talk.chatId)], note: 'help' };
        if (talk.command === 'status') return { replies: [await this.status(projectId, talk.chatId, talk.userId)], note: 'status' };
        if (talk.payload === null) return { replies: [replies.plans(talk.chatId, await this.plans(projectId))], note: 'plans' };
        return this.resume(projectId, talk.chatId, talk.userId, talk.payload);
      case 'button':
        return this.button(projectId, talk);
    }
  }

  /** The project's plans a member can buy here: those granting a Telegram target. */
  private async plans(projectId: string): Promise<PlanView[]> {
    const { items } = await this.ports.plans.list(projectId, { limit: 100, offset: 0 });
    return items.filter((p) => p.plan_targets.some((t) => t.platform === 'telegram')).slice(0, MAX_PLAN_BUTTONS);
  }

  private async status(projectId: string, chatId: string, userId: string): Promise<TelegramReply> {
    const { items, total } = await this.ports.memberships.list(projectId, { userId, limit: MAX_LISTED_MEMBERSHIPS, offset: 0 });
    // The portal shows payments and billing: worth a link only to someone with a membership.
    const portal = items.length > 0 ? await this.ports.portal.create(projectId, userId) : null;
    return replies.memberships(chatId, items, total, portal?.ok ? portal.value : null);
  }

  /** `/start {pay_link_id}`: the link again, only to the user it was made for, only while it can be paid. */
  private async resume(projectId: string, chatId: string, userId: string, payLinkId: string): Promise<ConversationAnswer> {
    const link = PAY_LINK_ID.test(payLinkId) ? await this.ports.payLinks.find(projectId, payLinkId) : null;
    const usable = link !== null && link.user_id === userId && link.open && Date.parse(link.expires_at) > this.clock.now().getTime();
    if (!usable) {
      // One answer for unknown, someone else's and expired: nothing tells a guesser which it was.
      return { replies: [replies.linkNotUsable(chatId)], note: link === null ? 'resume refused: no such pay link' : 'resume refused: not this user’s, or not payable' };
    }
    const plan = (await this.plans(projectId)).find((p) => p.plan_id === link.plan_id) ?? null;
    return { replies: [replies.payLink(chatId, plan, link)], note: 'pay link resumed' };
  }

  /** A plan button: the callback answered, then, in the private chat only, the member's own pay link. */
  private async button(projectId: string, talk: Extract<TelegramTalk, { kind: 'button' }>): Promise<ConversationAnswer> {
    const answered = (text?: string): TelegramReply => ({ method: 'answerCallbackQuery', callbackQueryId: talk.callbackQueryId, ...(text ? { text } : {}) });
    if (talk.chatId === null) {
      return { replies: [answered('Message me privately and send /start to get your payment link.')], note: 'a button outside the private chat: no pay link' };
    }
    const planId = planOfButton(talk.data);
    const plan = planId ? (await this.plans(projectId)).find((p) => p.plan_id === planId) : undefined;
    if (!plan) return { replies: [answered(), replies.planGone(talk.chatId)], note: 'a button of a plan not on offer' };
    const made = await this.ports.payLinks.create(projectId, { planId: plan.plan_id, userId: talk.userId });
    if (!made.ok) {
      return { replies: [answered(), replies.cannotSell(talk.chatId)], note: `no pay link: ${made.error.code} ${made.error.message}`, warn: true };
    }
    return { replies: [answered(), replies.payLink(talk.chatId, plan, made.value)], note: 'pay link made' };
  }
}
