import Type from 'typebox';
import { Envelope, errorResponses, InstantString, ProjectParams } from '../../schemas.js';

const LiveToken = Type.Object({
  token: Type.String({ description: 'Pass as `auth.token` in the Socket.IO handshake, with `auth.project_id`' }),
  project_id: Type.String({ format: 'uuid' }),
  expires_at: InstantString,
  expires_in: Type.Integer({ description: 'Seconds the token stays valid for new connections' }),
});

export const mintLiveTokenSchema = {
  summary: 'Mint a short-lived live-update token for a browser',
  description:
    'A signed token scoped to this project that a browser passes to the live-updates Socket.IO endpoint ' +
    'instead of an API key. It only opens connections: an open connection is not closed when the token expires.',
  params: ProjectParams,
  response: { 200: Envelope(LiveToken), ...errorResponses() },
};
