import type { Logger } from 'pino';
import { LoopJob, WakeLoop } from '../../wake-loop.js';
import type { Clock } from '../clock.js';
import type { Platform } from '../targets/target.view.js';
import { parseQuietHours, quietHoursEnd } from '../lifecycle/reminder-rules.js';
import { composeMessage, type ComposedMessage, type LinkButton, type MessageKind, type Voice } from '../lifecycle/member-messages.js';

/**
 * Confirmations (docs/front-desk.md, "Confirmations"): after a payment grants or extends a
 * membership, the project's bot tells the member what they got and until when, by a Discord DM or
 * a Telegram private message. The payment's transaction queues one row per payment
 * (`notifications`, by the payment's key), so a payment applied twice confirms once and a crash
 * loses nothing. On Telegram every invite link made for a paid member is queued too, in the
 * statement that records it (kind `invite`, by the link): a confirmation still to be sent carries
 * the link and drops that row, otherwise the link goes in a short message of its own, so each link
 * reaches the member once. Reminders before a membership ends are queued the same way (kind
 * `reminder`, docs/lifecycle.md) and sent here too, held through the project's quiet hours; so are
 * the other moments (welcome, expired, payment_failed, cancelled), each dropped once it is no longer
 * true (whyNotSent) and worded in the project's language (src/domain/lifecycle/member-messages.ts). This job claims due rows (`FOR UPDATE SKIP LOCKED`, each pushed past a
 * lease while it is sent) of the bots this process holds (only the holder of a bot's lease calls
 * its API: src/access/bot-leases.ts), sends each through that bot's client and records the answer:
 *
 * - sent: done;
 * - the member cannot be written to (Discord 50007, Telegram "bot was blocked by the user" or "bot
 *   can't initiate conversation"): the row ends `unreachable` and the member is recorded unreachable
 *   on that platform once, with one `notification.failed` event; never retried;
 * - 429: tried again after the platform's Retry-After; 5xx, no answer: again with backoff, at most
 *   MAX_ATTEMPTS attempts in all, then `failed`;
 * - any other refusal: `failed` at once; nothing left to confirm (the membership ended or was
 *   deleted, the bot was disconnected): `dropped`;
 * - the bot let go here meanwhile (its lease lost): given back, due at once and the attempt not
 *   counted, for the process that holds the bot now.
 */

/** A claimed message with what it says: a confirmation, an invite link of its own, a reminder, or another moment of the membership (docs/lifecycle.md). */
export interface ClaimedConfirmation {
  id: string;
  kind: MessageKind;
  projectId: string;
  userId: string;
  platform: Platform;
  /** This attempt's number, from 1. */
  attempt: number;
  /** The member's first name or username, when known. */
  name: string | null;
  /** The membership's plan (null once the plan or the membership is gone). */
  planName: string | null;
  planId: string | null;
  recurring: boolean;
  /** The membership's end date now (null once it is deleted). */
  endDate: Date | null;
  /** The membership is still active. */
  active: boolean;
  /** The membership is in a trial (docs/payments.md, "Trials"). */
  trial: boolean;
  /** Its renewal is cancelled (it ends at the end of the paid period). */
  cancelAtPeriodEnd: boolean;
  /** The end date the message was written for (reminder, expired): another end date on the membership now drops it unsent. */
  writtenFor: Date | null;
  /** When the message was queued (a failed payment's grace counts from then). */
  createdAt: Date;
  /**
   * The project's bot on `platform`: `held` (by this process: rows of a healthy bot are claimed
   * only by its lease holder), `unhealthy` (its token was refused; nobody holds it), null once
   * disconnected.
   */
  bot: 'held' | 'unhealthy' | null;
  /** A confirmation's Telegram invite links: the member's current ones not sent on their own. */
  invites: string[];
  /** The invite rows whose links the confirmation carries: dropped once it is sent. */
  carried: string[];
  /** An invite row's link while it is current (not used, revoked or expired), else null. */
  invite: { link: string; chatName: string; expiresAt: Date; joinRequest: boolean } | null;
  /** How the project speaks (settings `default_language`, `timezone_preference`, `date_format_preference`, `time_format_preference`, `messages`). */
  voice: Voice;
  /** The project's `quiet_hours` (reminders wait through them). */
  quietHours: string | null;
}

/** The links a message points to, made when it is sent (null when none can be made: no price, no public URL). */
export interface ReminderLinks {
  /** A pay link for the same plan and member (a one-time plan's reminder, an expired membership). */
  renew(projectId: string, userId: string, planId: string): Promise<string | null>;
  /** Where the member manages billing, still working days later (a recurring plan's reminder, a failed payment). */
  billing(projectId: string, userId: string): Promise<string | null>;
}

export interface ConfirmationQueue {
  /** Due rows of the bots leased to `owners` (this process's access workers), and of projects with no healthy bot. */
  claim(owners: readonly string[], now: Date, leaseUntil: Date, limit: number, inviteWaitMs: number): Promise<ClaimedConfirmation[]>;
}

export interface ConfirmationOutcomes {
  /** Sent; the invite rows in `carried` (links the message carried) are dropped with it. */
  sent(id: string, now: Date, carried: readonly string[]): Promise<void>;
  retry(id: string, next: Date, error: string): Promise<void>;
  /** Not sent because the bot is not held here any more: due at `now` again, this attempt not counted. */
  giveBack(id: string, now: Date, error: string): Promise<void>;
  finish(id: string, state: 'failed' | 'dropped', error: string): Promise<void>;
  /** Not sent yet on purpose (quiet hours): due again at `until`, this attempt not counted. */
  hold(id: string, until: Date, why: string): Promise<void>;
  unreachable(n: Pick<ClaimedConfirmation, 'id' | 'userId' | 'platform'>, reason: string, error: string, now: Date): Promise<boolean>;
}

/** What the platform answered a message. */
export type SendOutcome =
  | { kind: 'sent' }
  /** The member cannot be written to: `reason` is what `notification.failed` says. */
  | { kind: 'unreachable'; reason: 'dm_closed' | 'bot_blocked' | 'no_conversation'; error: string }
  /** Try again: after `retryAfterMs` when the platform said (429), else on the backoff. */
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  /** Refused for good. */
  | { kind: 'failed'; error: string }
  /** Not this process's to send: the bot is not (or no longer) held here. */
  | { kind: 'released'; error: string };

/**
 * Sends one message through the project's bot on a platform, with the client of the access worker
 * holding it (src/access/confirmation-calls.ts).
 */
export interface MessageChannel {
  /** The lease owners of this process's access workers: the bots whose messages it may send. */
  readonly owners: readonly string[];
  /** `buttons`: link buttons under the text (Discord: a link button; Telegram: an inline keyboard URL button). */
  send(to: Pick<ClaimedConfirmation, 'platform' | 'projectId' | 'userId'>, text: string, buttons: readonly LinkButton[]): Promise<SendOutcome>;
}

export interface ConfirmationJobDeps {
  queue: ConfirmationQueue;
  outcomes: ConfirmationOutcomes;
  channel: MessageChannel;
  clock: Clock;
  logger: Logger;
  /** Without them a reminder says how to check the membership instead of carrying a link. */
  links?: ReminderLinks;
  /** TENURE_PAYMENTS_GRACE_PERIOD: a failed renewal keeps access this long after it failed. */
  graceMs?: number;
}

export interface ConfirmationJobOptions {
  pollMs: number;
  /** How long a claimed row is kept from other processes while it is sent. */
  leaseMs: number;
  batchSize: number;
  /** How long a Telegram confirmation waits for the member's invite link. */
  inviteWaitMs: number;
}

export const DEFAULT_CONFIRMATION_OPTIONS: ConfirmationJobOptions = { pollMs: 5_000, leaseMs: 60_000, batchSize: 20, inviteWaitMs: 60_000 };

/** Attempts in all before a confirmation is given up as `failed`. */
export const MAX_ATTEMPTS = 6;
/** The wait before attempt n + 1 after a passing failure (n from 1). */
const BACKOFF_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000];

export function backoffMs(attempt: number): number {
  return BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length) - 1]!;
}

/** The message's words and buttons (src/domain/lifecycle/member-messages.ts), with the link made for it now. */
export function messageOf(c: ClaimedConfirmation, link: string | null, graceMs = 0): ComposedMessage {
  // A failed renewal keeps access through the grace period, counted from the failure (docs/payments.md).
  const endDate =
    c.kind === 'payment_failed' && c.endDate !== null ? new Date(Math.max(c.endDate.getTime(), c.createdAt.getTime() + graceMs)) : c.kind === 'reminder' || c.kind === 'expired' ? c.writtenFor ?? c.endDate : c.endDate;
  return composeMessage(
    { kind: c.kind, platform: c.platform, name: c.name, planName: c.planName, endDate, recurring: c.recurring, trial: c.trial, link, invites: c.invites, invite: c.invite },
    c.voice,
  );
}

/**
 * Why a message is not to be sent (any more), or null: each moment goes only while what it says
 * is still true when it is picked up, and only while the owner has it on.
 */
export function whyNotSent(c: ClaimedConfirmation, now: Date): string | null {
  if (c.voice.messages[c.kind]?.enabled === false) return `the ${c.kind} message is turned off in the project's messages setting`;
  switch (c.kind) {
    case 'reminder':
      return reminderGone(c, now);
    case 'invite':
      return c.invite === null ? 'the link was used, revoked or expired before it was sent' : null;
    case 'expired':
      if (c.endDate === null) return 'the membership was deleted';
      if (c.active) return 'the membership is active again';
      return c.writtenFor !== null && c.endDate.getTime() !== c.writtenFor.getTime() ? 'the membership ended at another date since' : null;
    case 'cancelled':
      if (!c.active) return 'the membership is no longer active';
      return c.cancelAtPeriodEnd ? null : 'the renewal was resumed';
    case 'confirmation':
      return !c.active || c.planName === null ? 'the membership is no longer active' : null;
    case 'welcome':
    case 'payment_failed':
      return c.active ? null : 'the membership is no longer active';
  }
}

export class ConfirmationJob extends LoopJob {
  protected readonly loop: WakeLoop;

  constructor(
    private readonly deps: ConfirmationJobDeps,
    private readonly options: ConfirmationJobOptions = DEFAULT_CONFIRMATION_OPTIONS,
  ) {
    super();
    this.loop = new WakeLoop(() => this.drain(), (err) => deps.logger.error({ err }, 'confirmations: a pass failed; the rows are retried after their lease'), options.pollMs);
  }


  /** Claims and sends until nothing is due. */
  private async drain(): Promise<void> {
    const { batchSize, leaseMs, inviteWaitMs } = this.options;
    for (;;) {
      if (this.loop.isStopped) return;
      const now = this.deps.clock.now();
      const claimed = await this.deps.queue.claim(this.deps.channel.owners, now, new Date(now.getTime() + leaseMs), batchSize, inviteWaitMs);
      for (const c of claimed) {
        // Stopping: the rest go back at once (their attempt not counted), not after their claim lease.
        if (this.loop.isStopped) await this.deps.outcomes.giveBack(c.id, this.deps.clock.now(), 'the worker stopped before sending it');
        else await this.sendOne(c);
      }
      if (claimed.length < batchSize) return;
    }
  }

  /** The link a message's button leads to, made now (a pay link lives a day; the billing page does not expire). */
  private async linkOf(c: ClaimedConfirmation): Promise<string | null> {
    const { links } = this.deps;
    if (!links) return null;
    const billing = c.kind === 'payment_failed' || (c.kind === 'reminder' && c.recurring);
    const renew = (c.kind === 'reminder' && !c.recurring) || c.kind === 'expired';
    try {
      if (billing) return await links.billing(c.projectId, c.userId);
      if (renew && c.planId !== null) return await links.renew(c.projectId, c.userId, c.planId);
    } catch (err) {
      // The message still says when, and how to check: better than no message.
      this.deps.logger.warn({ err, project_id: c.projectId, notification_id: c.id }, 'confirmations: no link for the message');
    }
    return null;
  }

  private async sendOne(c: ClaimedConfirmation): Promise<void> {
    const { outcomes, clock, logger } = this.deps;
    const gone = whyNotSent(c, clock.now());
    if (gone) return outcomes.finish(c.id, 'dropped', gone);
    if (c.kind === 'reminder') {
      const quiet = c.quietHours === null ? null : parseQuietHours(c.quietHours);
      const until = quiet === null ? null : quietHoursEnd(clock.now(), quiet, c.voice.timeZone);
      if (until !== null) return outcomes.hold(c.id, until, 'quiet hours');
    }
    if (c.bot === null) return outcomes.finish(c.id, 'dropped', `no ${c.platform} bot is connected`);
    if (c.bot === 'unhealthy') {
      logger.warn({ project_id: c.projectId, notification_id: c.id, platform: c.platform }, 'confirmations: the bot token was refused; the message is not sent');
      return outcomes.finish(c.id, 'failed', `the ${c.platform} bot token was refused: connect the bot again`);
    }
    const message = messageOf(c, await this.linkOf(c), this.deps.graceMs);
    const outcome = await this.deps.channel.send(c, message.text, message.buttons);
    const now = clock.now();
    const where = { project_id: c.projectId, notification_id: c.id, kind: c.kind, user_id: c.userId, platform: c.platform, attempt: c.attempt };
    switch (outcome.kind) {
      case 'sent':
        return outcomes.sent(c.id, now, c.carried);
      case 'unreachable': {
        const recorded = await outcomes.unreachable(c, outcome.reason, outcome.error, now);
        logger.info({ ...where, reason: outcome.reason, recorded }, 'confirmations: the member cannot be reached');
        return;
      }
      case 'retry':
        if (c.attempt >= MAX_ATTEMPTS) {
          logger.warn({ ...where, error: outcome.error }, 'confirmations: given up after the last attempt');
          return outcomes.finish(c.id, 'failed', outcome.error);
        }
        return outcomes.retry(c.id, new Date(now.getTime() + (outcome.retryAfterMs ?? backoffMs(c.attempt))), outcome.error);
      case 'failed':
        logger.warn({ ...where, error: outcome.error }, 'confirmations: the platform refused the message');
        return outcomes.finish(c.id, 'failed', outcome.error);
      case 'released':
        logger.info({ ...where, error: outcome.error }, 'confirmations: the bot is not held here any more; left to its holder');
        return outcomes.giveBack(c.id, now, outcome.error);
    }
  }
}

/** Why a reminder is not to be sent any more, or null: it is sent only while its membership is active with the end date it names. */
export function reminderGone(c: Pick<ClaimedConfirmation, 'active' | 'endDate' | 'writtenFor'>, now: Date): string | null {
  if (!c.active || c.endDate === null) return 'the membership ended or was deleted';
  if (c.writtenFor !== null && c.endDate.getTime() !== c.writtenFor.getTime()) return 'the membership ends at another date now';
  if (c.endDate.getTime() <= now.getTime()) return 'the membership ended';
  return null;
}
