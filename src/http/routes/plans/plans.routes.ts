import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PlansService } from '../../../domain/plans/plans.service.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import {
  addPlanTargetSchema,
  createPlanSchema,
  deletePlanSchema,
  getPlanSchema,
  listPlansSchema,
  removePlanTargetSchema,
  updatePlanSchema,
} from './plans.schemas.js';

export const plansRoutes: FastifyPluginAsyncTypebox<{ plans: PlansService }> = async (app, { plans }) => {
  const base = '/v2/projects/:project_id/plans';

  app.get(base, { schema: listPlansSchema }, async (request, reply) => {
    const page = await plans.list(request.params.project_id, request.query);
    return sendSuccess(reply, 200, { total: page.total, message: 'Plans retrieved successfully', data: page.items });
  });

  app.post(base, { schema: createPlanSchema }, async (request, reply) => {
    const created = unwrap(await plans.create(request.params.project_id, request.body));
    return sendSuccess(reply, 201, { message: 'Plan created successfully', data: created });
  });

  app.get(`${base}/:plan_id`, { schema: getPlanSchema }, async (request, reply) => {
    const plan = unwrap(await plans.get(request.params.project_id, request.params.plan_id));
    return sendSuccess(reply, 200, { message: 'Plan retrieved successfully', data: plan });
  });

  app.patch(`${base}/:plan_id`, { schema: updatePlanSchema }, async (request, reply) => {
    const plan = unwrap(await plans.update(request.params.project_id, request.params.plan_id, request.body));
    return sendSuccess(reply, 200, { message: 'Plan updated successfully', data: plan });
  });

  app.delete(`${base}/:plan_id`, { schema: deletePlanSchema }, async (request, reply) => {
    unwrap(await plans.delete(request.params.project_id, request.params.plan_id));
    return reply.code(204).send(null);
  });

  app.post(`${base}/:plan_id/targets/:target_id`, { schema: addPlanTargetSchema }, async (request, reply) => {
    const { project_id, plan_id, target_id } = request.params;
    const plan = unwrap(await plans.addTarget(project_id, plan_id, target_id));
    return sendSuccess(reply, 200, { message: 'Target added to plan successfully', data: plan });
  });

  app.delete(`${base}/:plan_id/targets/:target_id`, { schema: removePlanTargetSchema }, async (request, reply) => {
    const { project_id, plan_id, target_id } = request.params;
    unwrap(await plans.removeTarget(project_id, plan_id, target_id));
    return reply.code(204).send(null);
  });
};
