import Type from 'typebox';
import { Envelope, errorResponses, ProjectParams, Uuid } from '../../schemas.js';

export const createWebhookSchema = {
  summary: 'Create a webhook',
  params: ProjectParams,
  body: Type.Object({ url: Type.String({ 'x-message': 'url must be a string' }) }),
  response: {
    200: Envelope(Type.Object({ url: Type.String(), id: Type.String({ format: 'uuid' }), secret: Type.String() })),
    ...errorResponses(422),
  },
};

export const deleteWebhookSchema = {
  summary: 'Delete a webhook',
  params: Type.Object({ project_id: Type.String(), webhook_id: Uuid('webhook_id') }),
  response: { 200: Envelope(Type.Null()), ...errorResponses(404, 422) },
};
