import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { InvoicingService } from '../../../domain/invoicing/invoicing.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { getInvoicingSchema, updateInvoicingSchema } from './invoicing.schemas.js';

/** A member's invoicing details (docs/portal.md, "Invoicing details"). */
export const invoicingRoutes: FastifyPluginAsyncTypebox<{ invoicing: Pick<InvoicingService, 'get' | 'update'> }> = async (app, { invoicing }) => {
  const path = '/v2/projects/:project_id/users/:user_id/invoicing';

  app.get(path, { schema: getInvoicingSchema }, async (request, reply) => {
    const data = await invoicing.get(request.params.project_id, request.params.user_id);
    return sendSuccess(reply, 200, { message: 'Invoicing details retrieved successfully', data });
  });

  app.patch(path, { schema: updateInvoicingSchema }, async (request, reply) => {
    const data = unwrap(await invoicing.update(request.params.project_id, request.params.user_id, request.body));
    return sendSuccess(reply, 200, { message: 'Invoicing details updated successfully', data });
  });
};
