import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.js';
import { digestOf } from '../front-desk/link-tokens.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import type { PayLinkMaker, PortalSignIn } from './discord-login.service.js';
import { sameText } from '../same-text.js';

/**
 * Signing in with the Telegram Login Widget (docs/web.md, "Signing in with Telegram"): the widget
 * on the plan page and the portal's sign-in page sends the browser back to tenure with the user's
 * Telegram id signed with the project's bot token. A genuine, recent answer, never seen before,
 * then ends as a Login with Discord does: buying, in the member's own pay link for the plan (made
 * for their Telegram id, the user id the bot knows them by, so the bot can send them their invite
 * after payment); signing in, in a portal link of their own, which the browser opens at once and
 * so starts the portal's session (PortalService.signIn). The bot's token is opened only here, to
 * check the answer, and goes nowhere else.
 *
 * Telegram signs who signed in, not which browser asked, so an answer alone would log in any
 * browser it is opened in (login CSRF: a victim sent to the attacker's own fresh answer). The page
 * showing the widget therefore leaves an intent in this browser (`intent`: the project, buying on
 * its plan page or signing in to its portal, and an expiry ten minutes on, under an HMAC keyed
 * from the instance's encryption key) and `finish` accepts an answer only with a matching one.
 */

/** How long the intent the widget's page leaves in the browser lasts: as long as an answer may take. */
export const INTENT_TTL_MS = 10 * 60_000;

/** What the browser meant to do with the widget: buy on the plan page, or sign in to the portal. */
export type TelegramLoginPurpose = 'plans' | 'portal';

/** Who Telegram says signed in. */
export interface TelegramUser {
  /** The Telegram user id, in decimal: the member's user_id in tenure, as the bot knows them. */
  id: string;
  firstName: string | null;
  lastName: string | null;
  username: string | null;
  photoUrl: string | null;
  authDate: Date;
}

/** What Telegram's documented check made of the widget's answer. */
export type TelegramLoginCheck =
  /** `validUntil`: when the answer becomes too old to accept, so how long its use must be remembered. */
  | { kind: 'ok'; user: TelegramUser; hash: string; validUntil: Date }
  /** `id`, `auth_date` or `hash` missing or not of their form, or a field given twice. */
  | { kind: 'malformed'; reason: string }
  /** The hash does not match the fields: not signed with this bot's token, or changed on the way. */
  | { kind: 'bad-hash' }
  /** Too old, or dated in the future beyond a small skew. */
  | { kind: 'stale'; authDate: Date };

/** The project's Telegram bot as the store reads it for a login. */
export interface TelegramLoginTarget {
  /** null: no Telegram bot connected. */
  bot: { tokenSealed: string; username: string | null } | null;
  /** Whether the plan asked for is one of the project's, not deleted, granting an enabled Telegram target. */
  planGrantsTelegram: boolean;
}

export interface TelegramLoginStatements {
  /** The project's bot, and whether `planId` (when given) can be bought with it; null when there is no such project. */
  telegramLoginTarget(projectId: string, planId: string | null): Promise<TelegramLoginTarget | null>;
  /** Records an answer's hash digest as used until `expiresAt`; false when it was already (a replay). */
  spendTelegramLogin(u: { hashDigest: string; projectId: string; usedAt: Date; expiresAt: Date }): Promise<boolean>;
}

/** Telegram's documented check of the widget's answer (src/web/telegram-login.ts). */
export type TelegramLoginChecker = (query: URLSearchParams, botToken: string, now: Date) => TelegramLoginCheck;

export type TelegramLoginOutcome =
  | { kind: 'pay'; payLinkId: string; projectId: string }
  /** A portal sign-in: the member's portal link (its token), opened next by this browser. */
  | { kind: 'portal'; token: string; projectId: string }
  /** A portal sign-in by a Telegram account the project has no membership for. */
  | { kind: 'no-member'; projectId: string }
  | { kind: 'unknown-project' }
  /** No Telegram bot connected (or its token cannot be opened): nothing can check the answer. */
  | { kind: 'not-configured'; projectId: string }
  /** The plan is not the project's, deleted, or grants nothing on Telegram. */
  | { kind: 'no-plan'; projectId: string }
  | { kind: 'malformed'; projectId: string; reason: string }
  | { kind: 'bad-hash'; projectId: string }
  | { kind: 'stale'; projectId: string }
  /** This very answer was used before. */
  | { kind: 'replayed'; projectId: string }
  /** No intent of this browser's for this project and purpose (another browser, expired, altered): the widget was not shown here. */
  | { kind: 'forged'; projectId: string }
  /** Telegram said who they are, but the pay link could not be made (banned, plan not sellable). */
  | { kind: 'no-pay-link'; projectId: string; message: string };

export interface TelegramLoginOptions {
  /** TENURE_PUBLIC_URL: the widget's `data-auth-url` starts with it. */
  publicUrl: string;
}

export class TelegramLoginService {
  constructor(
    private readonly store: TelegramLoginStatements,
    private readonly check: TelegramLoginChecker,
    private readonly payLinks: PayLinkMaker,
    private readonly portal: PortalSignIn,
    private readonly box: SecretBox | null,
    private readonly clock: Clock,
    private readonly options: TelegramLoginOptions,
  ) {}

  /** The widget's `data-auth-url`: buying `planId`, or (null) signing in to the portal. Its domain is the one set in BotFather. */
  authUrl(projectId: string, planId: string | null): string {
    const base = `${this.options.publicUrl}/p/${encodeURIComponent(projectId)}/telegram/login`;
    return planId === null ? base : `${base}/${encodeURIComponent(planId)}`;
  }

  /**
   * The intent a page showing the widget leaves in the browser (a cookie): `projectId.purpose.expiry.mac`,
   * the expiry in Unix seconds, the mac an HMAC-SHA-256 of the rest under a key derived from the
   * instance's encryption key. null without that key (no Telegram login can be checked then anyway).
   */
  intent(projectId: string, purpose: TelegramLoginPurpose): string | null {
    if (!this.box) return null;
    const body = `${projectId}.${purpose}.${Math.floor((this.clock.now().getTime() + INTENT_TTL_MS) / 1000)}`;
    return `${body}.${macOf(this.box, body)}`;
  }

  /** Whether `cookie` is an unexpired intent of this instance's for `projectId` and `purpose`. */
  private intended(box: SecretBox, cookie: string | undefined, projectId: string, purpose: TelegramLoginPurpose): boolean {
    const parts = cookie?.split('.') ?? [];
    if (parts.length !== 4) return false;
    const [id, p, expiry, mac] = parts as [string, string, string, string];
    if (!/^[0-9]{1,12}$/.test(expiry) || !sameText(mac, macOf(box, `${id}.${p}.${expiry}`))) return false;
    return id === projectId && p === purpose && Number(expiry) * 1000 > this.clock.now().getTime();
  }

  /**
   * The widget's redirect back: `query` as received, for buying `planId` or (null) signing in;
   * `intentCookie` the intent the page showing the widget left in this browser.
   * Every refusal comes before anything is written; the answer is spent only once it checked out.
   */
  async finish(projectId: string, planId: string | null, query: URLSearchParams, intentCookie: string | undefined): Promise<TelegramLoginOutcome> {
    const target = await this.store.telegramLoginTarget(projectId, planId);
    if (!target) return { kind: 'unknown-project' };
    const token = target.bot && this.box ? openOrNull(this.box, target.bot.tokenSealed) : null;
    if (token === null || !this.box) return { kind: 'not-configured', projectId };
    if (planId !== null && !target.planGrantsTelegram) return { kind: 'no-plan', projectId };
    if (!this.intended(this.box, intentCookie, projectId, planId === null ? 'portal' : 'plans')) return { kind: 'forged', projectId };
    const now = this.clock.now();
    const checked = this.check(query, token, now);
    if (checked.kind === 'malformed') return { kind: 'malformed', projectId, reason: checked.reason };
    if (checked.kind !== 'ok') return { kind: checked.kind, projectId };
    // Kept until the answer would be refused as stale anyway.
    if (!(await this.store.spendTelegramLogin({ hashDigest: digestOf(checked.hash), projectId, usedAt: now, expiresAt: checked.validUntil }))) return { kind: 'replayed', projectId };
    const userId = checked.user.id;
    if (planId === null) {
      const signedIn = await this.portal.signIn(projectId, userId);
      return signedIn.kind === 'link' ? { kind: 'portal', token: signedIn.token, projectId } : { kind: 'no-member', projectId };
    }
    const link = await this.payLinks.create(projectId, { planId, userId });
    if (!link.ok) return { kind: 'no-pay-link', projectId, message: link.error.message };
    return { kind: 'pay', payLinkId: link.value.pay_link_id, projectId };
  }
}

/** The intent's mac: hex HMAC-SHA-256 under a key of its own, derived from the instance key. */
function macOf(box: SecretBox, body: string): string {
  return createHmac('sha256', box.derive('telegram login intent')).update(body).digest('hex');
}
