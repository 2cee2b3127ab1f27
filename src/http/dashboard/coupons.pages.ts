import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { INVITEE_MODES, RENEWAL_CONSTRAINTS } from '../../domain/payments/coupon-rules.js';
import type { CouponView } from '../../domain/payments/coupon.view.js';
import type { CouponInput, CouponPatch } from '../../domain/payments/coupons.service.js';
import { createCouponSchema, updateCouponSchema } from '../routes/coupons/coupons.schemas.js';
import { audit, dashboardPage, foundOr404, projectPath, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { confirmedAction } from './confirmed-action.js';
import { pageOf, pagerOf, when } from './paging.js';
import { field, schemaProblem, type Form } from './plans-form.js';

/**
 * The coupons page (`/dashboard/{project_id}/coupons`, docs/dashboard-settings.md): the list
 * (`coupons:read`), creating one (`coupons:add`), changing what a PATCH may change (code, auto-apply,
 * who may use it, its plans, uses, expiry: `coupons:update`), deleting one after a confirmation page
 * (`coupons:delete`); checked against the API's body schemas, then through CouponsService, audited.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { Params: { project_id: string } };
type CouponParams = { Params: { project_id: string; coupon_id: string } };
const NOTICES = { created: 'Coupon created.', updated: 'Coupon saved.', deleted: 'Coupon deleted.' };

/** The form's values as typed (re-shown after a refusal). */
type Typed = Record<string, string | string[]>;

const whole = (text: string): number | string => (/^[0-9]{1,10}$/.test(text) ? Number(text) : text);
const planIdsOf = (body: unknown): string[] => {
  const raw = (body as Form | undefined)?.plan_ids;
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
};
/** A date (YYYY-MM-DD) as the instant its day starts in UTC; anything else as typed, for the schema to refuse. */
const expiryOf = (text: string): string | null => (text === '' ? null : /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00.000Z` : text);

/** What both forms share: the fields a PATCH may change. */
function changeable(body: unknown): Record<string, unknown> {
  const plans = planIdsOf(body);
  const maxUses = field(body, 'max_uses');
  return {
    code: field(body, 'code'),
    auto_apply: field(body, 'auto_apply') === 'on',
    invitee_mode: field(body, 'invitee_mode') || 'any',
    plan_scope: plans.length === 0 ? 'all' : 'selected',
    ...(plans.length === 0 ? {} : { plan_ids: plans }),
    max_uses: maxUses === '' ? null : whole(maxUses),
    expires_at: expiryOf(field(body, 'expires_at')),
  };
}

const typedOf = (body: unknown): Typed => {
  const out: Typed = {};
  for (const k of ['code', 'coupon_type', 'amount', 'currency', 'renewal_constraint', 'renewal_months', 'invitee_mode', 'max_uses', 'expires_at', 'auto_apply']) out[k] = field(body, k);
  out.plan_ids = planIdsOf(body);
  return out;
};

const typedFrom = (c: CouponView): Typed => ({
  code: c.code,
  invitee_mode: c.invitee_mode,
  max_uses: c.max_uses === null ? '' : String(c.max_uses),
  expires_at: c.expires_at ? c.expires_at.slice(0, 10) : '',
  auto_apply: c.auto_apply ? 'on' : '',
  plan_ids: c.plan_ids,
});

const discountOf = (c: CouponView) => (c.coupon_type === 'percentage' ? `${c.amount}% off` : `${c.amount} ${c.currency ?? ''} (smallest unit) off`);
const RENEWAL: Record<string, string> = { first_payment: 'first payment', every_payment: 'every payment', months: 'months' };

export const couponsPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const coupons = services.coupons;
  const planChoices = async (projectId: string) => (await services.plans.list(projectId, { limit: 100, offset: 0 })).items.map((p) => ({ id: p.plan_id, name: p.plan_name }));

  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; typed?: Typed } = {}) => {
    const actor = requirePermission(request, 'coupons:read');
    const { page, limit, offset } = pageOf(request.query);
    const [list, plans] = await Promise.all([coupons.list(actor.projectId, { limit, offset }), planChoices(actor.projectId)]);
    const names = new Map(plans.map((p) => [p.id, p.name]));
    return dashboardPage(reply, 'coupons', {
      title: 'Coupons',
      section: 'plans',
      notices: NOTICES,
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      coupons: list.items.map((c) => ({
        id: c.coupon_id,
        code: c.code,
        discount: discountOf(c),
        renewal: c.renewal_constraint === 'months' ? `${c.renewal_months} months` : RENEWAL[c.renewal_constraint],
        plans: c.plan_scope === 'all' ? 'all plans' : c.plan_ids.map((id) => names.get(id) ?? id).join(', '),
        uses: c.max_uses === null ? `${c.uses} of unlimited` : `${c.uses} of ${c.max_uses}`,
        expires: c.expires_at ? when(c.expires_at) : 'never',
        auto: c.auto_apply,
      })),
      pager: pagerOf(projectPath(context, actor.projectId, '/coupons'), page, list.total),
      plans,
      typed: extra.typed ?? { coupon_type: 'percentage', renewal_constraint: 'first_payment', invitee_mode: 'any', plan_ids: [] },
      renewals: RENEWAL_CONSTRAINTS,
      invitees: INVITEE_MODES,
    });
  };

  app.get<Params>('/dashboard/:project_id/coupons', hidden, async (request, reply) => listPage(request, reply));

  app.post<Params>('/dashboard/:project_id/coupons/create', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'coupons:add');
    const b = request.body;
    const months = field(b, 'renewal_months');
    const currency = field(b, 'currency').toUpperCase();
    const body: Record<string, unknown> = {
      ...changeable(b),
      coupon_type: field(b, 'coupon_type'),
      amount: whole(field(b, 'amount')),
      ...(currency ? { currency } : {}),
      renewal_constraint: field(b, 'renewal_constraint') || 'first_payment',
      ...(months ? { renewal_months: whole(months) } : {}),
    };
    if (body.expires_at === null) delete body.expires_at;
    const typed = typedOf(b);
    const problem = schemaProblem(createCouponSchema.body, body);
    if (problem) return listPage(request, reply, { status: 422, error: problem, typed });
    const made = await coupons.create(actor.projectId, body as unknown as CouponInput);
    if (!made.ok) return listPage(request, reply, { status: made.error.status, error: made.error.message, typed });
    await audit(request, 'coupon.add', made.value.coupon_id, { code: made.value.code, coupon_type: made.value.coupon_type, amount: made.value.amount });
    return seeOther(reply, '/coupons', 'created');
  });

  const couponOf = (request: FastifyRequest<CouponParams>, reply: FastifyReply): Promise<CouponView | null> =>
    foundOr404(reply, request.params.coupon_id, (projectId, id) => coupons.get(projectId, id), { title: 'Coupon not found', line: 'It does not exist (any more).', back: '/coupons', backLabel: 'Back to the coupons' });

  const editPage = async (reply: FastifyReply, c: CouponView, extra: { status?: number; error?: string; typed?: Typed } = {}) =>
    dashboardPage(reply, 'coupon-edit', {
      title: `Coupon ${c.code}`,
      section: 'plans',
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      coupon: { id: c.coupon_id, discount: discountOf(c), renewal: c.renewal_constraint === 'months' ? `${c.renewal_months} months` : RENEWAL[c.renewal_constraint], uses: c.uses },
      typed: extra.typed ?? typedFrom(c),
      plans: await planChoices(reply.request.dashboardActor!.projectId),
      invitees: INVITEE_MODES,
    });

  app.get<CouponParams>('/dashboard/:project_id/coupons/:coupon_id', hidden, async (request, reply) => {
    requirePermission(request, 'coupons:read');
    const c = await couponOf(request, reply);
    return c ? editPage(reply, c) : reply;
  });

  app.post<CouponParams>('/dashboard/:project_id/coupons/:coupon_id/update', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'coupons:update');
    const c = await couponOf(request, reply);
    if (!c) return reply;
    const patch = changeable(request.body);
    const typed = typedOf(request.body);
    const problem = schemaProblem(updateCouponSchema.body, patch);
    if (problem) return editPage(reply, c, { status: 422, error: problem, typed });
    const updated = await coupons.update(actor.projectId, c.coupon_id, patch as CouponPatch);
    if (!updated.ok) return editPage(reply, c, { status: updated.error.status, error: updated.error.message, typed });
    await audit(request, 'coupon.update', c.coupon_id, { changed: patch });
    return seeOther(reply, '/coupons', 'updated');
  });

  confirmedAction(app, {
    route: '/coupons/:coupon_id/delete',
    permissions: ['coupons:delete'],
    section: 'plans',
    find: couponOf,
    confirm: (c) => ({
      title: `Delete the coupon ${c.code}?`,
      lines: ['Checkouts can no longer use it. Discounts already given stay as they are.'],
      confirmLabel: 'Yes, delete the coupon',
      back: `/coupons/${c.coupon_id}`,
    }),
    act: (actor, c) => coupons.delete(actor.projectId, c.coupon_id),
    audit: (c) => ({ action: 'coupon.delete', subject: c.coupon_id, details: { code: c.code } }),
    refused: (reply, c, error) => editPage(reply, c, { status: error.status, error: error.message }),
    done: (reply) => seeOther(reply, '/coupons', 'deleted'),
  });
};
