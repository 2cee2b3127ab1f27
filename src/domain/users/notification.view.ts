import type { MessageKind } from '../lifecycle/member-messages.js';
import type { Platform } from '../targets/target.view.js';

/**
 * One message tenure queued for a member, as `GET …/users/{user_id}/notifications` shows it
 * (docs/lifecycle.md, "What each member was sent"): what it was and what became of it, never its
 * text (a reminder's text carries a pay or portal link made for the member alone).
 */
export interface NotificationView {
  /** Null for a reminder that was never queued (`skipped`: a nearer offset's went instead). */
  notification_id: string | null;
  kind: MessageKind;
  /** The platform of the bot that sends it; null for a `skipped` reminder. */
  platform: Platform | null;
  state: NotificationState;
  /** Calls made to the platform for it (a hold through quiet hours is not one). */
  attempts: number;
  /** What the platform answered last, or why it was held, dropped or skipped; null once sent. */
  last_error: string | null;
  /** A reminder's offset and the end date it is about; null for other kinds. */
  reminder: { offset: string; end_date: string } | null;
  created_at: string;
  sent_at: string | null;
  /** While `queued` or `held`: when it is due next. */
  next_attempt_at: string | null;
}

/**
 * `queued` (to be sent, or being retried), `held` (waiting for the end of quiet hours), `sent`,
 * `unreachable` (the member cannot be written to), `failed`, `dropped` (nothing left to say:
 * the membership ended, was extended or deleted, the bot was disconnected), `skipped` (a reminder
 * due with a nearer one, docs/lifecycle.md).
 */
export type NotificationState = 'queued' | 'held' | 'sent' | 'unreachable' | 'failed' | 'dropped' | 'skipped';
