import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PortalService } from '../../../domain/front-desk/portal.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { createPortalLinkSchema } from './portal-links.schemas.js';

export const portalLinksRoutes: FastifyPluginAsyncTypebox<{ portal: Pick<PortalService, 'create'> }> = async (app, { portal }) => {
  app.post('/v2/projects/:project_id/users/:user_id/portal-links', { schema: createPortalLinkSchema }, async (request, reply) => {
    const link = unwrap(await portal.create(request.params.project_id, request.params.user_id));
    return sendSuccess(reply, 200, { message: 'Portal link created successfully', data: link });
  });
};
