import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DiscordInteractions } from '../../../domain/front-desk/discord-interactions.js';
import { AppError } from '../../../domain/errors.js';
import { unwrap } from '../../result.js';
import { receiveDiscordInteractionSchema } from './discord-interactions.schemas.js';

/**
 * `POST /interactions/discord/{project_id}`: the Interactions Endpoint URL of the project's Discord
 * application (docs/front-desk.md, "Discord: commands for members"). No API key: Discord signs
 * each interaction, checked against the raw body before anything is read, so this plugin reads
 * JSON as text. A bad or missing signature is a 401, as Discord requires of an endpoint it keeps.
 * The answer is Discord's interaction callback, not the envelope; a deferred answer's follow-up
 * runs once it is sent. Bounded per project (docs/rate-limits.md, "Platform callbacks").
 */
export const discordInteractionsRoutes: FastifyPluginAsyncTypebox<{ discordInteractions: DiscordInteractions }> = async (app, { discordInteractions }) => {
  // This plugin's own parser (encapsulated): the signature covers the bytes, not a re-serialisation.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser('*', (_request, _payload, done) => done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Discord interactions are JSON (Content-Type: application/json)'), undefined));

  app.post(
    '/interactions/discord/:project_id',
    { schema: receiveDiscordInteractionSchema, config: { public: true, callback: { platform: 'discord', endpoint: 'project_id' } } },
    async (request, reply) => {
      const answer = unwrap(
        await discordInteractions.receive(
          request.params.project_id,
          request.body ?? '',
          request.headers['x-signature-ed25519'],
          request.headers['x-signature-timestamp'],
        ),
      );
      if (answer.after) {
        const after = answer.after;
        // Discord must have the deferred answer before its message can be edited.
        reply.raw.once('finish', () => void after());
      }
      return reply.code(200).send(answer.callback);
    },
  );
};
