import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ON_EXPIRY_BY_KIND } from '../../domain/targets/target-rules.js';
import type { TargetView } from '../../domain/targets/target.view.js';
import { createTargetSchema, updateTargetSchema } from '../routes/targets/targets.schemas.js';
import { audit, dashboardPage, foundOr404, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { confirmedAction } from './confirmed-action.js';
import { field, schemaProblem } from './plans-form.js';

/**
 * Targets on the plans page (docs/dashboard-settings.md): the list's rows and the create form's
 * body (the route is in plans.pages.ts, which re-renders the list), and a target's own page:
 * rename, enable or disable, what losing access does, retrying after an error (`plans:update`),
 * deleting after a confirmation page (`plans:delete`); through TargetsService as the v2 API does.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type TargetParams = { Params: { project_id: string; target_id: string } };

export interface TargetForm {
  name: string;
  platform: string;
  kind: string;
  externalId: string;
  parentId: string;
}

export const emptyTargetForm: TargetForm = { name: '', platform: 'discord', kind: 'role', externalId: '', parentId: '' };

export const targetFormOf = (body: unknown): TargetForm => ({
  name: field(body, 'target_name'),
  platform: field(body, 'platform'),
  kind: field(body, 'kind'),
  externalId: field(body, 'external_id'),
  parentId: field(body, 'parent_target_id').toLowerCase(),
});

/** The API's create body of the form, or the API's 422 message. */
export function targetBody(form: TargetForm): { body: Record<string, unknown> } | { problem: string } {
  const body = { target_name: form.name, platform: form.platform, kind: form.kind, external_id: form.externalId, parent_target_id: form.parentId || null };
  const problem = schemaProblem(createTargetSchema.body, body);
  return problem ? { problem } : { body };
}

/** A target as the tables show it. */
export const targetRows = (targets: readonly TargetView[]) =>
  targets.map((t) => ({
    id: t.target_id,
    name: t.target_name,
    platform: t.platform,
    kind: t.kind,
    externalId: t.external_id,
    enabled: t.is_enabled,
    plans: t.plan_count,
    members: t.participant_count,
    healthy: t.health === 'ok',
    error: t.health_error ? `${t.health_error.message} (${t.health_error.code})` : null,
  }));

export const targetsPages: FastifyPluginAsync<DashboardDeps> = async (app, { services }) => {
  const targets = services.targets;

  const targetOf = (request: FastifyRequest<TargetParams>, reply: FastifyReply): Promise<TargetView | null> =>
    foundOr404(reply, request.params.target_id, (projectId, id) => targets.get(projectId, id), { title: 'Target not found', line: 'This target does not exist (any more).', back: '/plans', backLabel: 'Back to the plans' });

  const editPage = (reply: FastifyReply, target: TargetView, extra: { status?: number; error?: string; form?: { name: string; enabled: boolean; onExpiry: string } } = {}) =>
    dashboardPage(reply, 'target-edit', {
      title: `Target ${target.target_name}`,
      section: 'plans',
      notices: { 'target-updated': 'Target saved.' },
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      target: targetRows([target])[0],
      form: extra.form ?? { name: target.target_name, enabled: target.is_enabled, onExpiry: target.on_expiry },
      onExpiryChoices: ON_EXPIRY_BY_KIND[target.platform][target.kind] ?? ['none'],
    });

  app.get<TargetParams>('/dashboard/:project_id/targets/:target_id', hidden, async (request, reply) => {
    requirePermission(request, 'plans:read');
    const target = await targetOf(request, reply);
    return target ? editPage(reply, target) : reply;
  });

  app.post<TargetParams>('/dashboard/:project_id/targets/:target_id/update', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'plans:update');
    const target = await targetOf(request, reply);
    if (!target) return reply;
    const form = { name: field(request.body, 'target_name'), enabled: field(request.body, 'is_enabled') === 'on', onExpiry: field(request.body, 'on_expiry') };
    // Every field is sent: a save with nothing changed still retries an unhealthy target, as a PATCH does.
    const change = { target_name: form.name, is_enabled: form.enabled, on_expiry: form.onExpiry };
    const problem = schemaProblem(updateTargetSchema.body, change);
    if (problem) return editPage(reply, target, { status: 422, error: problem, form });
    const updated = await targets.updateOne(actor.projectId, target.target_id, change as Parameters<typeof targets.updateOne>[2]);
    if (!updated.ok) return editPage(reply, target, { status: updated.error.status, error: updated.error.message, form });
    await audit(request, 'target.update', target.target_id, { ...change, was_unhealthy: target.health === 'unhealthy' });
    return seeOther(reply, `/targets/${target.target_id}`, 'target-updated');
  });

  confirmedAction(app, {
    route: '/targets/:target_id/delete',
    permissions: ['plans:delete'],
    section: 'plans',
    find: targetOf,
    confirm: (target) => ({
      title: `Delete the target ${target.target_name}?`,
      lines: [`Every plan that grants it stops granting it (${target.plan_count} now), and members lose what it gave them as its on_expiry says (${target.on_expiry}). Memberships are untouched.`],
      confirmLabel: 'Yes, delete the target',
      back: `/targets/${target.target_id}`,
    }),
    act: (actor, target) => targets.delete(actor.projectId, target.target_id),
    audit: (target) => ({ action: 'target.delete', subject: target.target_id, details: { name: target.target_name, platform: target.platform, external_id: target.external_id } }),
    refused: (reply, target, error) => editPage(reply, target, { status: error.status, error: error.message }),
    done: (reply) => seeOther(reply, '/plans', 'target-deleted'),
  });
};
