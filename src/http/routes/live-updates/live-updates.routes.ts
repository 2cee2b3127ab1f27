import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { LiveTokenService } from '../../../live/live-tokens.js';
import { sendSuccess } from '../../envelope.js';
import { mintLiveTokenSchema } from './live-updates.schemas.js';

export const liveUpdatesRoutes: FastifyPluginAsyncTypebox<{ liveTokens: LiveTokenService }> = async (app, { liveTokens }) => {
  // The gate has already checked that the key belongs to this project (403 otherwise). No
  // Idempotency-Key replays: a replay would hand out a stored credential, possibly expired. A read
  // of the project's events in effect, so read-only keys may mint: the token only opens the socket,
  // which such a key may open itself.
  const options = { schema: mintLiveTokenSchema, config: { idempotency: false, reads: true } };
  app.post('/v2/projects/:project_id/integrations/live-updates/tokens', options, async (request, reply) => {
    const minted = await liveTokens.mint(request.principal);
    return sendSuccess(reply, 200, { message: 'Live-update token created successfully', data: minted });
  });
};
