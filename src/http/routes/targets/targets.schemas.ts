import Type from 'typebox';
import { EXTERNAL_ID_PATTERN } from '../../../domain/targets/target-rules.js';
import { ON_EXPIRY_VALUES, PLATFORMS, TARGET_KINDS } from '../../../domain/targets/target.view.js';
import { Envelope, errorResponses, Page, ProjectParams, Uuid } from '../../schemas.js';

const oneOf = <T extends string>(values: readonly T[], field: string) =>
  Type.Enum([...values], { 'x-message': `${field} must be one of: ${values.join(', ')}` });

const Platform = oneOf(PLATFORMS, 'platform');
const Kind = oneOf(TARGET_KINDS, 'kind');

export const TargetName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  'x-message': 'target_name must be a non-blank string of at most 200 characters',
});
const IsEnabled = Type.Boolean({ 'x-message': 'is_enabled must be true or false' });
/** Which kind allows which value is the service's check (target-rules.ts); null: the kind's default. */
const onExpiryMessage = `on_expiry must be one of: ${ON_EXPIRY_VALUES.join(', ')}, or null`;
const OnExpiry = Type.Union([Type.Enum([...ON_EXPIRY_VALUES], { 'x-message': onExpiryMessage }), Type.Null()], {
  description:
    'What losing access does here: Discord role remove_role (default) | none; Discord guild kick | none (default); ' +
    'Telegram kick (default) | none; Discord channel none. null: the kind’s default',
  'x-message': onExpiryMessage,
});

export const Target = Type.Object({
  target_id: Type.String({ format: 'uuid' }),
  target_name: Type.String(),
  platform: Platform,
  kind: Kind,
  external_id: Type.String({ description: 'The platform’s own id: Discord snowflake, Telegram chat id or @username' }),
  is_enabled: Type.Boolean(),
  plan_count: Type.Integer({ description: 'Plans (not deleted) that grant this target; computed' }),
  parent_target_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  participant_count: Type.Integer({ description: 'Distinct users with an active membership on a plan granting this target; computed' }),
  on_expiry: Type.Enum([...ON_EXPIRY_VALUES], { description: 'The on_expiry in effect: the target’s own or its kind’s default' }),
  health: Type.Union([Type.Literal('ok'), Type.Literal('unhealthy')], {
    description: 'unhealthy: the bot cannot act here (Missing Permissions, Unknown Role); a PATCH of the target retries',
  }),
  health_error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
});

const TargetParams = Type.Object({ project_id: Type.String(), target_id: Uuid('target_id') });

export const createTargetSchema = {
  summary: 'Register a target (a Discord guild, role or channel, a Telegram group or channel)',
  params: ProjectParams,
  body: Type.Object({
    target_name: TargetName,
    platform: Platform,
    kind: Kind,
    external_id: Type.String({
      pattern: EXTERNAL_ID_PATTERN,
      'x-message': 'external_id must be the platform id: up to 20 digits (a leading - for Telegram chats) or a Telegram @username',
    }),
    parent_target_id: Type.Optional(Type.Union([Uuid('parent_target_id'), Type.Null()])),
    is_enabled: Type.Optional(IsEnabled),
    on_expiry: Type.Optional(OnExpiry),
  }, { examples: [{ target_name: 'My server', platform: 'discord', kind: 'guild', external_id: '123456789012345678' }] }),
  response: { 201: Envelope(Target), ...errorResponses(404, 409, 422) },
};

export const listTargetsSchema = {
  summary: 'List targets, newest first',
  params: ProjectParams,
  querystring: Type.Object(Page()),
  response: { 200: Envelope(Type.Array(Target), true), ...errorResponses(422) },
};

export const getTargetSchema = {
  summary: 'Get a target (data is an array of one, as in the original API)',
  params: TargetParams,
  response: { 200: Envelope(Type.Array(Target, { minItems: 1, maxItems: 1 }), true), ...errorResponses(404, 422) },
};

const Change = {
  is_enabled: Type.Optional(IsEnabled),
  target_name: Type.Optional(TargetName),
  on_expiry: Type.Optional(OnExpiry),
};

export const updateTargetSchema = {
  summary: 'Rename, enable or disable a target, or set its on_expiry (also retries it after an error: health back to ok)',
  params: TargetParams,
  body: Type.Object(Change, { examples: [{ target_name: 'VIP members' }] }),
  response: { 200: Envelope(Target, true), ...errorResponses(404, 422) },
};

/** The batch limit: one transaction locks every listed target, so the batch is bounded. */
export const MAX_BATCH = 100;

export const updateTargetsSchema = {
  summary: 'Update several targets at once, all or nothing',
  params: ProjectParams,
  body: Type.Array(Type.Object({ target_id: Uuid('target_id'), ...Change }), { examples: [[{ target_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', is_enabled: true }]],
    minItems: 1,
    maxItems: MAX_BATCH,
    'x-message': `The body must be an array of 1 to ${MAX_BATCH} target updates`,
  }),
  response: { 200: Envelope(Type.Array(Target), true), ...errorResponses(404, 422) },
};

export const deleteTargetSchema = {
  summary: 'Delete a target (plans stop granting it)',
  params: TargetParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 409, 422) },
};
