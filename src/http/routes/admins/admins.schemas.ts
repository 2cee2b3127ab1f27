import Type from 'typebox';
import { GRANTABLE } from '../../../domain/admins/permissions.js';
import { Envelope, errorResponses, Page, ProjectParams, UserId } from '../../schemas.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** An admin as the API shows it (docs/dashboard.md, "Admins"). */
export const Admin = Type.Object({
  user_id: Type.String(),
  user_name: Type.Object({ first_name: NullableString, username: NullableString }),
  permissions: Type.Array(Type.String(), { description: '`area:action` strings; `all` grants everything', examples: [['memberships:read', 'memberships:update']] }),
});

/** Any string is taken here so that the service can name the unknown ones in its 422. */
const Permissions = Type.Array(Type.String({ maxLength: 64, 'x-message': 'permissions[] must be strings of at most 64 characters' }), {
  maxItems: 100,
  'x-message': 'permissions must be an array of at most 100 permission strings',
  description: `Each one of GET /admins/permissions: ${GRANTABLE.join(', ')}`,
});

const AdminParams = Type.Object({ project_id: Type.String(), user_id: UserId });

export const listAdminsSchema = {
  summary: "List the project's admins, the first made first",
  params: ProjectParams,
  querystring: Type.Object(Page(50)),
  response: { 200: Envelope(Type.Array(Admin), true), ...errorResponses(422) },
};

export const addAdminSchema = {
  summary: 'Make a user of the project an admin with permissions',
  description: 'The user must be one the project has seen (GET /users); 404 when not, 409 when already an admin, 422 naming unknown permissions.',
  params: ProjectParams,
  body: Type.Object(
    { user_id: UserId, permissions: Permissions },
    { examples: [{ user_id: '123456789012345678', permissions: ['memberships:read', 'memberships:update'] }] },
  ),
  response: { 201: Envelope(Admin), ...errorResponses(404, 409, 422) },
};

export const updateAdminSchema = {
  summary: "Replace an admin's whole set of permissions",
  params: AdminParams,
  body: Type.Object({ permissions: Permissions }, { examples: [{ permissions: ['all'] }] }),
  response: { 200: Envelope(Admin), ...errorResponses(404, 422) },
};

export const removeAdminSchema = {
  summary: 'Remove an admin; the person stays a user of the project',
  params: AdminParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(404, 422) },
};

export const listPermissionsSchema = {
  summary: 'The permission strings an admin can be given: `area:action`, and `all`',
  params: ProjectParams,
  response: { 200: Envelope(Type.Array(Type.String()), true), ...errorResponses() },
};
