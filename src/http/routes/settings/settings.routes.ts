import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SettingsService } from '../../../domain/settings/settings.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { getSettingSchema, listSettingsSchema, patchSettingsSchema, putSettingSchema } from './settings.schemas.js';

export const settingsRoutes: FastifyPluginAsyncTypebox<{ settings: SettingsService }> = async (app, { settings }) => {
  const base = '/v2/projects/:project_id/settings';

  app.get(base, { schema: listSettingsSchema }, async (request, reply) => {
    const all = await settings.all(request.params.project_id);
    return sendSuccess(reply, 200, { message: 'Settings retrieved successfully', data: all });
  });

  app.patch(base, { schema: patchSettingsSchema }, async (request, reply) => {
    unwrap(await settings.patch(request.params.project_id, request.body as Record<string, unknown>));
    return reply.code(204).send(null);
  });

  app.get(`${base}/:key`, { schema: getSettingSchema }, async (request, reply) => {
    const one = unwrap(await settings.get(request.params.project_id, request.params.key));
    return sendSuccess(reply, 200, { message: 'Setting retrieved successfully', data: one });
  });

  app.put(`${base}/:key`, { schema: putSettingSchema }, async (request, reply) => {
    unwrap(await settings.put(request.params.project_id, request.params.key, request.body.value));
    return reply.code(204).send(null);
  });
};
