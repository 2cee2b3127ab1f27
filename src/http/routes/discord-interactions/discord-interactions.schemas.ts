import Type from 'typebox';
import { errorResponses, ProjectParams } from '../../schemas.js';

/** A message as Discord takes it in an interaction callback (docs/front-desk.md shows each one). */
const Button = Type.Object({
  type: Type.Integer(),
  style: Type.Integer(),
  label: Type.String(),
  custom_id: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
});
const MessageData = Type.Object({
  content: Type.String(),
  flags: Type.Optional(Type.Integer()),
  components: Type.Optional(Type.Array(Type.Object({ type: Type.Integer(), components: Type.Array(Button) }))),
});

export const receiveDiscordInteractionSchema = {
  // Discord's own callback, not an operation of the API: left out of the OpenAPI document.
  hide: true,
  summary: "Discord posts an interaction with the project's bot (its Interactions Endpoint URL)",
  description: 'Ed25519-signed by Discord (X-Signature-Ed25519 over X-Signature-Timestamp + the raw body); answered with an interaction callback, not the envelope.',
  params: ProjectParams,
  headers: Type.Object({
    'x-signature-ed25519': Type.Optional(Type.String()),
    'x-signature-timestamp': Type.Optional(Type.String()),
  }),
  body: Type.String({ description: 'The interaction as Discord sent it: JSON, read as the raw bytes its signature covers' }),
  response: {
    200: Type.Object({ type: Type.Integer({ description: '1 PONG, 4 a message, 5 deferred (edited once ready)' }), data: Type.Optional(MessageData) }),
    ...errorResponses(404, 422),
  },
};
