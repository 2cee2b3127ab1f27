import Type from 'typebox';
import { API_KEY_SCOPES } from '../../../domain/projects/api-key-scope.js';
import { Envelope, errorResponses, InstantString, Page, ProjectParams, Uuid } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const SCOPES = 'full: every route of the project; read: its GET routes (and minting a live-updates token) only';
const scope = (description: string) =>
  Type.Enum([...API_KEY_SCOPES], { description, 'x-message': `scope must be one of: ${API_KEY_SCOPES.join(', ')}` });

/**
 * Key metadata (docs/api-keys-settings-users.md, "API keys"); `*_by` is the acting key's id, or "cli".
 * `scope` is tenure's addition (docs/api-keys-settings-users.md, "Scopes: full and read keys").
 */
export const KeyMetadata = Type.Object({
  id: Type.String({ format: 'uuid' }),
  label: Nullable(Type.String()),
  last_four: Type.String(),
  created_at: InstantString,
  created_by: Nullable(Type.String()),
  updated_at: InstantString,
  updated_by: Nullable(Type.String()),
  revoked_at: Nullable(InstantString),
  revoked_by: Nullable(Type.String()),
  scope: scope(SCOPES),
});

export const createKeySchema = {
  summary: 'Create an API key (the secret is shown only in this response)',
  params: ProjectParams,
  body: Type.Object({
    label: Type.String({ minLength: 1, maxLength: 200, 'x-message': 'label must be 1 to 200 characters' }),
    scope: Type.Optional(scope(`${SCOPES}. Default: full`)),
  }),
  response: {
    200: Envelope(Type.Object({ key: Type.String({ description: 'The secret; store it now, it is never shown again' }), metadata: KeyMetadata })),
    ...errorResponses(409, 422),
  },
};

export const listKeysSchema = {
  summary: "List the project's API keys (metadata only, revoked keys included), newest first",
  params: ProjectParams,
  querystring: Type.Object(Page()),
  response: { 200: Envelope(Type.Object({ keys: Type.Array(KeyMetadata) }), true), ...errorResponses(422) },
};

export const revokeKeySchema = {
  summary: 'Revoke an API key (immediate and permanent, on every node)',
  params: Type.Object({ project_id: Type.String(), key_id: Uuid('key_id') }),
  response: { 200: Envelope(KeyMetadata), ...errorResponses(404, 409, 422) },
};
