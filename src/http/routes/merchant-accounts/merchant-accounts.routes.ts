import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { MerchantAccountsService } from '../../../domain/payments/merchant-accounts.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import {
  createMerchantAccountSchema,
  deleteMerchantAccountSchema,
  getMerchantAccountSchema,
  listMerchantAccountsSchema,
} from './merchant-accounts.schemas.js';

export const merchantAccountsRoutes: FastifyPluginAsyncTypebox<{ merchantAccounts: MerchantAccountsService }> = async (app, { merchantAccounts }) => {
  const base = '/v2/projects/:project_id/merchant-accounts';

  app.post(base, { schema: createMerchantAccountSchema }, async (request, reply) => {
    const { account, created } = unwrap(await merchantAccounts.connect(request.params.project_id, request.body));
    const message = created ? 'Merchant account created successfully' : 'Merchant account updated successfully';
    return sendSuccess(reply, created ? 201 : 200, { message, data: account });
  });

  app.get(base, { schema: listMerchantAccountsSchema }, async (request, reply) => {
    const page = await merchantAccounts.list(request.params.project_id);
    return sendSuccess(reply, 200, { total: page.total, message: 'Merchant accounts retrieved successfully', data: page.items });
  });

  app.get(`${base}/:merchant_account_id`, { schema: getMerchantAccountSchema }, async (request, reply) => {
    const account = unwrap(await merchantAccounts.get(request.params.project_id, request.params.merchant_account_id));
    return sendSuccess(reply, 200, { message: 'Merchant account retrieved successfully', data: account });
  });

  app.delete(`${base}/:merchant_account_id`, { schema: deleteMerchantAccountSchema }, async (request, reply) => {
    unwrap(await merchantAccounts.delete(request.params.project_id, request.params.merchant_account_id));
    return sendSuccess(reply, 200, { message: 'Merchant account deleted successfully', data: null });
  });
};
