import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { PlanView } from '../../domain/plans/plan.view.js';
import { isUuid } from '../../domain/ids.js';
import { createPlanSchema, updatePlanSchema } from '../routes/plans/plans.schemas.js';
import { audit, dashboardPage, foundOr404, messagePage, projectPath, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { confirmedAction } from './confirmed-action.js';
import { pageOf, pagerOf } from './paging.js';
import { EMPTY_PLAN_FORM, planBody, planFormFrom, planFormOf, planPatch, schemaProblem, UNITS, type PlanForm } from './plans-form.js';
import { emptyTargetForm, targetBody, targetFormOf, targetRows, type TargetForm } from './plans-targets.pages.js';

/**
 * The plans page (`/dashboard/{project_id}/plans`, docs/dashboard-settings.md): plans with what each
 * grants, creating one (`plans:add`), editing one and granting or withdrawing targets
 * (`plans:update`), deleting one after a confirmation page (`plans:delete`); each through
 * PlansService as the v2 API does, checked against the API's body schema first, and audited.
 * The targets' own forms are in plans-targets.pages.ts; both lists show on this page.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { Params: { project_id: string } };
type PlanParams = { Params: { project_id: string; plan_id: string } };
type LinkParams = { Params: { project_id: string; plan_id: string; target_id: string } };

const NOTICES = {
  created: 'Plan created.',
  updated: 'Plan saved.',
  unchanged: 'Nothing to save: the plan already reads so.',
  deleted: 'Plan deleted.',
  granted: 'Target added to the plan.',
  withdrawn: 'Target removed from the plan.',
  'target-created': 'Target created.',
  'target-updated': 'Target saved.',
  'target-deleted': 'Target deleted.',
};

const billingOf = (p: PlanView) => (p.plan_data.plan_recurring ? 'Recurring' : 'Once');
const planRow = (p: PlanView) => ({
  id: p.plan_id,
  name: p.plan_name,
  price: p.plan_price_formatted,
  duration: p.plan_duration,
  billing: billingOf(p),
  trialDays: p.trial_days ?? null,
  targets: p.plan_targets.map((t) => ({ id: t.target_id, name: t.target_name, platform: t.platform, kind: t.kind })),
});

export const plansPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const plans = services.plans;

  /** The list page, with the create forms as typed when one was refused. */
  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; planForm?: PlanForm; targetForm?: TargetForm } = {}) => {
    const actor = requirePermission(request, 'plans:read');
    const { page, limit, offset } = pageOf(request.query);
    const [list, targets] = await Promise.all([plans.list(actor.projectId, { limit, offset }), services.targets.list(actor.projectId, { limit: 200, offset: 0 })]);
    return dashboardPage(reply, 'plans', {
      title: 'Plans and targets',
      section: 'plans',
      notices: NOTICES,
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      plans: list.items.map(planRow),
      pager: pagerOf(projectPath(context, actor.projectId, '/plans'), page, list.total),
      targets: targetRows(targets.items),
      parents: targets.items.filter((t) => t.kind === 'guild' || t.kind === 'group'),
      form: extra.planForm ?? EMPTY_PLAN_FORM,
      targetForm: extra.targetForm ?? emptyTargetForm,
      units: UNITS,
    });
  };

  app.get<Params>('/dashboard/:project_id/plans', hidden, async (request, reply) => listPage(request, reply));

  app.post<Params>('/dashboard/:project_id/plans/create', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'plans:add');
    const form = planFormOf(request.body);
    const body = planBody(form);
    const problem = schemaProblem(createPlanSchema.body, body);
    if (problem) return listPage(request, reply, { status: 422, error: problem, planForm: form });
    const made = await plans.create(actor.projectId, body as Parameters<typeof plans.create>[1]);
    if (!made.ok) return listPage(request, reply, { status: made.error.status, error: made.error.message, planForm: form });
    await audit(request, 'plan.add', made.value.plan_id, { name: made.value.plan_name, price: made.value.plan_price, currency: made.value.plan_currency });
    return seeOther(reply, `/plans/${made.value.plan_id}`, 'created');
  });

  app.post<Params>('/dashboard/:project_id/targets/create', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'plans:add');
    const form = targetFormOf(request.body);
    const checked = targetBody(form);
    if ('problem' in checked) return listPage(request, reply, { status: 422, error: checked.problem, targetForm: form });
    const made = await services.targets.create(actor.projectId, checked.body as unknown as Parameters<typeof services.targets.create>[1]);
    if (!made.ok) return listPage(request, reply, { status: made.error.status, error: made.error.message, targetForm: form });
    await audit(request, 'target.add', made.value.target_id, { name: made.value.target_name, platform: made.value.platform, kind: made.value.kind, external_id: made.value.external_id });
    return seeOther(reply, '/plans', 'target-created');
  });

  /** The plan of the path, or a 404 page (null). */
  const planOf = (request: FastifyRequest<PlanParams>, reply: FastifyReply): Promise<PlanView | null> =>
    foundOr404(reply, request.params.plan_id, (projectId, id) => plans.get(projectId, id), { title: 'Plan not found', line: 'This plan does not exist (any more).', back: '/plans', backLabel: 'Back to the plans' });

  const editPage = async (reply: FastifyReply, plan: PlanView, extra: { status?: number; error?: string; form?: PlanForm } = {}) => {
    const actor = reply.request.dashboardActor!;
    const all = await services.targets.list(actor.projectId, { limit: 200, offset: 0 });
    const granted = new Set(plan.plan_targets.map((t) => t.target_id));
    return dashboardPage(reply, 'plan-edit', {
      title: `Plan ${plan.plan_name}`,
      section: 'plans',
      notices: NOTICES,
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      plan: planRow(plan),
      form: extra.form ?? planFormFrom(plan),
      units: UNITS,
      grantable: all.items.filter((t) => !granted.has(t.target_id)).map((t) => ({ id: t.target_id, label: `${t.target_name} (${t.platform} ${t.kind})` })),
    });
  };

  app.get<PlanParams>('/dashboard/:project_id/plans/:plan_id', hidden, async (request, reply) => {
    requirePermission(request, 'plans:read');
    const plan = await planOf(request, reply);
    return plan ? editPage(reply, plan) : reply;
  });

  app.post<PlanParams>('/dashboard/:project_id/plans/:plan_id/update', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'plans:update');
    const plan = await planOf(request, reply);
    if (!plan) return reply;
    const form = planFormOf(request.body);
    const patch = planPatch(plan, form);
    if (Object.keys(patch).length === 0) return seeOther(reply, `/plans/${plan.plan_id}`, 'unchanged');
    const problem = schemaProblem(updatePlanSchema.body, patch);
    if (problem) return editPage(reply, plan, { status: 422, error: problem, form });
    const updated = await plans.update(actor.projectId, plan.plan_id, patch);
    if (!updated.ok) return editPage(reply, plan, { status: updated.error.status, error: updated.error.message, form });
    await audit(request, 'plan.update', plan.plan_id, { changed: patch });
    return seeOther(reply, `/plans/${plan.plan_id}`, 'updated');
  });

  app.post<PlanParams>('/dashboard/:project_id/plans/:plan_id/targets', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'plans:update');
    const plan = await planOf(request, reply);
    if (!plan) return reply;
    const targetId = String((request.body as Record<string, unknown> | undefined)?.target_id ?? '').toLowerCase();
    if (!isUuid(targetId)) return editPage(reply, plan, { status: 422, error: 'Choose a target to add.' });
    const added = await plans.addTarget(actor.projectId, plan.plan_id, targetId);
    if (!added.ok) return editPage(reply, plan, { status: added.error.status, error: added.error.message });
    await audit(request, 'plan.target.add', plan.plan_id, { target_id: targetId });
    return seeOther(reply, `/plans/${plan.plan_id}`, 'granted');
  });

  confirmedAction(app, {
    route: '/plans/:plan_id/targets/:target_id/remove',
    permissions: ['plans:update'],
    section: 'plans',
    find: async (request: FastifyRequest<LinkParams>, reply) => {
      const plan = await planOf(request, reply);
      if (!plan) return null;
      const target = plan.plan_targets.find((t) => t.target_id === request.params.target_id.toLowerCase());
      if (target) return { plan, target };
      await messagePage(reply, 404, { title: 'Not granted by this plan', lines: ['Nothing was changed.'], action: { href: projectPath(context, request.dashboardActor!.projectId, `/plans/${plan.plan_id}`), label: 'Back to the plan' } });
      return null;
    },
    confirm: ({ plan, target }) => ({
      title: `Stop granting ${target.target_name} with ${plan.plan_name}?`,
      lines: ['Members whose access comes only from this plan lose it on this target as access is next synced. New buyers of the plan no longer get it.'],
      confirmLabel: 'Yes, remove it from the plan',
      back: `/plans/${plan.plan_id}`,
    }),
    act: (actor, { plan, target }) => plans.removeTarget(actor.projectId, plan.plan_id, target.target_id),
    audit: ({ plan, target }) => ({ action: 'plan.target.remove', subject: plan.plan_id, details: { target_id: target.target_id } }),
    refused: (reply, { plan }, error) => editPage(reply, plan, { status: error.status, error: error.message }),
    done: (reply, { plan }) => seeOther(reply, `/plans/${plan.plan_id}`, 'withdrawn'),
  });

  confirmedAction(app, {
    route: '/plans/:plan_id/delete',
    permissions: ['plans:delete'],
    section: 'plans',
    find: planOf,
    confirm: (plan) => ({
      title: `Delete the plan ${plan.plan_name}?`,
      lines: ['Nobody can buy it any more. Memberships already on it keep running to their end date, as with a plan deleted through the API.'],
      confirmLabel: 'Yes, delete the plan',
      back: `/plans/${plan.plan_id}`,
    }),
    act: (actor, plan) => plans.delete(actor.projectId, plan.plan_id),
    audit: (plan) => ({ action: 'plan.delete', subject: plan.plan_id, details: { name: plan.plan_name } }),
    refused: (reply, plan, error) => editPage(reply, plan, { status: error.status, error: error.message }),
    done: (reply) => seeOther(reply, '/plans', 'deleted'),
  });
};
