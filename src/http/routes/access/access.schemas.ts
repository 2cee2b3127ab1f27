import Type from 'typebox';
import { ACCESS_STATES } from '../../../domain/access/access.view.js';
import { PLATFORMS } from '../../../domain/targets/target.view.js';
import { Envelope, errorResponses, InstantString, Page, ProjectParams, UserId, Uuid } from '../../schemas.js';

const stateMessage = `state must be one of: ${ACCESS_STATES.join(', ')}`;

const AccessRow = Type.Object({
  user_id: Type.String({ description: 'The member’s id on the target’s platform' }),
  target_id: Type.String({ format: 'uuid' }),
  platform: Type.Enum([...PLATFORMS]),
  desired: Type.Enum(['granted', 'revoked'], { description: 'What the member should hold there' }),
  state: Type.Enum([...ACCESS_STATES], {
    description:
      'synced: the platform agrees; pending: a call is due; waiting_for_member: the member is not in the guild yet; ' +
      'failed: the target is unhealthy (fix it, then PATCH the target)',
  }),
  last_error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  attempts: Type.Integer({ description: 'Calls made for the current desired state' }),
  synced_at: Type.Union([InstantString, Type.Null()], { description: 'When the platform last agreed with desired' }),
});

export const listAccessSchema = {
  summary: 'The access rows: what each member should hold on each target, and where the sync stands; newest first',
  params: ProjectParams,
  querystring: Type.Object({
    user_id: Type.Optional(UserId),
    target_id: Type.Optional(Uuid('target_id')),
    state: Type.Optional(Type.Enum([...ACCESS_STATES], { 'x-message': stateMessage })),
    ...Page(),
  }),
  response: { 200: Envelope(Type.Array(AccessRow), true), ...errorResponses(422) },
};

const Invite = Type.Object({
  target_id: Type.String({ format: 'uuid', description: 'The Telegram group or channel target the link opens' }),
  chat_id: Type.String({ description: 'The Telegram chat id (the target’s external_id)' }),
  invite_link: Type.String({ description: 'The link to hand to the member; it works for them alone' }),
  kind: Type.Enum(['single_use', 'join_request'], {
    description: 'single_use: one person joins through it (member_limit 1); join_request: the member asks to join and the bot approves them alone',
  }),
  expires_at: Type.String({
    description: 'When Telegram stops accepting the link (ISO 8601 UTC with milliseconds); a fresh one is made after that',
    examples: ['2026-01-12T10:32:27.560Z'],
  }),
  created_at: InstantString,
});

export const listInvitesSchema = {
  summary: 'The member’s current Telegram invite links: not revoked, not used, not expired; newest first',
  description:
    'Each link is made for this member alone when they gain access to a Telegram target they are not in yet, and is also sent ' +
    'in the access.invite-created event. Hand it to the member: a single-use link lets one person in; someone joining with a ' +
    'link meant for another member is removed. A member already in the chat, or whose access ended, has none. ' +
    'Links are per member: one made during an earlier membership of the same user and still current is listed too.',
  params: Type.Object({ project_id: Type.String(), membership_id: Uuid('membership_id') }),
  response: { 200: Envelope(Type.Array(Invite), true), ...errorResponses(404, 422) },
};

export const resyncAccessSchema = {
  summary: 'Re-plan access now and compare with the platform: the whole project, or one member',
  params: ProjectParams,
  body: Type.Object({ user_id: Type.Optional(UserId) }, { examples: [{ user_id: '123456789012345678' }] }),
  response: {
    200: Envelope(
      Type.Object({
        user_id: Type.Union([Type.String(), Type.Null()], { description: 'The member resynced; null for the whole project' }),
        changed: Type.Integer({ description: 'Access rows whose desired state the re-plan changed' }),
        requeued: Type.Integer({ description: 'The member’s granted rows set back to pending, to be applied again' }),
        reconciling: Type.Integer({ description: 'Connected platforms whose comparison with the platform was moved to now' }),
      }),
    ),
    ...errorResponses(422),
  },
};
