import Type from 'typebox';
import { MESSAGE_KINDS } from '../../../domain/lifecycle/member-messages.js';
import { errorResponses, InstantString, Page, PagedEnvelope, UserId } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const MemberNotification = Type.Object({
  notification_id: Nullable(Type.String({ format: 'uuid', description: 'Null for a `skipped` reminder, which was never queued' })),
  kind: Type.Union(MESSAGE_KINDS.map((k) => Type.Literal(k)), { description: 'Which message: docs/lifecycle.md lists each and when it is sent' }),
  platform: Nullable(Type.Union([Type.Literal('discord'), Type.Literal('telegram')])),
  state: Type.Union(
    (['queued', 'held', 'sent', 'unreachable', 'failed', 'dropped', 'skipped'] as const).map((s) => Type.Literal(s)),
    { description: '`queued` (to send, or retrying), `held` (quiet hours), `sent`, `unreachable`, `failed`, `dropped` (nothing left to say), `skipped` (a nearer reminder went instead)' },
  ),
  attempts: Type.Integer({ description: 'Calls made to the platform for it' }),
  last_error: Nullable(Type.String({ description: "The platform's last answer, or why it was held, dropped or skipped" })),
  reminder: Nullable(Type.Object({ offset: Type.String({ examples: ['3d'] }), end_date: InstantString })),
  created_at: InstantString,
  sent_at: Nullable(InstantString),
  next_attempt_at: Nullable(InstantString),
});

export const listMemberNotificationsSchema = {
  summary: "The messages queued for a member (welcome, confirmations, invite links, reminders, expired, payment failed, cancelled) and what became of each, newest first",
  params: Type.Object({ project_id: Type.String(), user_id: UserId }),
  querystring: Type.Object(Page()),
  response: { 200: PagedEnvelope(Type.Array(MemberNotification)), ...errorResponses(404, 422) },
};
