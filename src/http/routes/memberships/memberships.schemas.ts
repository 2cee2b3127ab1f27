import Type from 'typebox';
import { MEMBERSHIP_QUERY_STATUSES, MEMBERSHIP_SORTS } from '../../../store/membership-queries.js';
import { CursorParam } from '../../cursor.js';
import { CursorListEnvelope, Envelope, errorResponses, Instant, InstantString, Page, ProjectParams, QueryInstant, UserId, Uuid } from '../../schemas.js';

export const Membership = Type.Object({
  membership_id: Type.String({ format: 'uuid' }),
  user_id: Type.String(),
  plan_id: Type.Union([Type.String(), Type.Null()]),
  membership_start_date: InstantString,
  membership_end_date: InstantString,
  user_name: Type.Union([
    Type.Object({ first_name: Type.Union([Type.String(), Type.Null()]), username: Type.Union([Type.String(), Type.Null()]) }),
    Type.Null(),
  ]),
  plan_name: Type.Union([Type.String(), Type.Null()]),
  plan_duration: Type.Union([Type.String(), Type.Null()]),
  subscription_id: Type.Union([Type.String(), Type.Null()]),
  subscription_status: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('active'), Type.Literal('expired')]),
  trial_ends_at: Type.Optional(
    Type.String({ description: "tenure's, only on a membership that began with a Stripe trial: when the trial ends (ISO 8601 UTC with milliseconds)" }),
  ),
  in_trial: Type.Optional(Type.Boolean({ description: "tenure's, with trial_ends_at: true while the membership is active and ends when its trial does" })),
});

/** Every part of `user_name` carries the one message, whichever branch ajv reports first. */
const USER_NAME_MESSAGE = 'user_name must be null or {first_name?, username?} with strings of 1 to 200 characters or null';
const NameField = Type.Union(
  [Type.String({ minLength: 1, maxLength: 200, 'x-message': USER_NAME_MESSAGE }), Type.Null({ 'x-message': USER_NAME_MESSAGE })],
  { 'x-message': USER_NAME_MESSAGE },
);
const UserNameInput = Type.Union(
  [
    Type.Object({ first_name: Type.Optional(NameField), username: Type.Optional(NameField) }, { 'x-message': USER_NAME_MESSAGE }),
    Type.Null({ 'x-message': USER_NAME_MESSAGE }),
  ],
  {
    'x-message': USER_NAME_MESSAGE,
    description: "The user's names, recorded in the project's users; a field left out keeps the stored one",
  },
);

const ExtendBody = Type.Object({ extend: Instant });
const NewEndDate = Type.Object({ new_end_date: InstantString });

export const extendOneSchema = {
  summary: "Set the end date of one user's membership",
  params: Type.Object({ project_id: Type.String(), user_id: UserId }),
  body: ExtendBody,
  response: { 200: Envelope(NewEndDate, true), ...errorResponses(404, 422) },
};

export const extendAllSchema = {
  summary: 'Set the end date of every membership of the project',
  params: ProjectParams,
  body: ExtendBody,
  response: { 200: Envelope(NewEndDate, true), ...errorResponses(422) },
};

export const createMembershipSchema = {
  summary: 'Create a membership',
  params: ProjectParams,
  body: Type.Object({
    user_id: UserId,
    end_date: Instant,
    plan_id: Type.Optional(Type.Union([Uuid('plan_id'), Type.Null()])),
    user_name: Type.Optional(UserNameInput),
  }),
  response: { 201: Envelope(Membership), ...errorResponses(404, 409, 422) },
};

export const listMembershipsSchema = {
  summary: 'List memberships, newest first unless sorted; filtered by user, status, plan or end date',
  description: 'docs/memberships.md, "Listing and filtering". Every parameter is optional; an unknown one is a 422.',
  params: ProjectParams,
  querystring: Type.Object({ ...membershipFilters(), ...Page(), cursor: CursorParam }),
  response: { 200: CursorListEnvelope(Type.Array(Membership)), ...errorResponses(422) },
};

/** The filters and order of `GET /memberships`, which its export takes too. */
export function membershipFilters() {
  return {
    user_id: Type.Optional(UserId),
    status: Type.Optional(
      Type.Enum([...MEMBERSHIP_QUERY_STATUSES], {
        'x-message': `status must be one of: ${MEMBERSHIP_QUERY_STATUSES.join(', ')}`,
        description: 'active (end date ahead), expired, or a kind of active: in_trial, in_grace (a failed renewal Stripe retries), cancelling (renewal off)',
      }),
    ),
    plan_id: Type.Optional(Uuid('plan_id')),
    ends_before: Type.Optional(QueryInstant('ends_before')),
    ends_after: Type.Optional(QueryInstant('ends_after')),
    sort: Type.Optional(Type.Enum([...MEMBERSHIP_SORTS], { 'x-message': `sort must be one of: ${MEMBERSHIP_SORTS.join(', ')}`, default: '-created_at' })),
  };
}

const MembershipParams = Type.Object({ project_id: Type.String(), membership_id: Uuid('membership_id') });

export const getMembershipSchema = {
  summary: 'Get a membership',
  params: MembershipParams,
  response: { 200: Envelope(Membership), ...errorResponses(404, 422) },
};

export const deleteMembershipSchema = {
  summary: 'Delete a membership (ends access at once)',
  params: MembershipParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 422) },
};
