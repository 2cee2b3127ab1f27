import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AnalyticsService } from '../../../domain/analytics/analytics.service.js';
import { AppError } from '../../../domain/errors.js';
import { sendSuccess } from '../../envelope.js';
import { queryInstant } from '../../schemas.js';
import { analyticsSchema } from './analytics.schemas.js';

/** An instant of the query, or a 422 when it passes the pattern but names no real one. */
function instant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const parsed = queryInstant(value);
  if (parsed === null) throw new AppError('VALIDATION_ERROR', `${name} is not a real calendar instant`);
  return parsed;
}

export const analyticsRoutes: FastifyPluginAsyncTypebox<{ analytics: AnalyticsService }> = async (app, { analytics }) => {
  app.get('/v2/projects/:project_id/analytics', { schema: analyticsSchema }, async (request, reply) => {
    const { from, to, interval } = request.query;
    const from_ = instant('from', from);
    const to_ = instant('to', to);
    const data = await analytics.view(request.params.project_id, {
      ...(from_ ? { from: from_ } : {}),
      ...(to_ ? { to: to_ } : {}),
      ...(interval ? { interval } : {}),
    });
    return sendSuccess(reply, 200, { message: 'Analytics retrieved successfully', data });
  });
};
