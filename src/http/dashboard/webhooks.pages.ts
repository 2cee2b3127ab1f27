import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isUuid } from '../../domain/ids.js';
import type { WebhookView } from '../../domain/webhooks/webhook.view.js';
import { SECRET_GRACE_MS } from '../../domain/webhooks/webhooks.service.js';
import type { DeliveryView } from '../../store/delivery-log.store.js';
import { audit, dashboardPage, foundOr404, projectPath, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { confirmedAction } from './confirmed-action.js';
import { pageOf, pagerOf, when } from './paging.js';
import { field } from './plans-form.js';

/**
 * The webhooks page (`/dashboard/{project_id}/webhooks`, docs/dashboard-settings.md): the project's
 * endpoints, adding one or rotating its signing secret (the secret shown once, on the answer to the
 * form, never again), removing one after a confirmation page, and per endpoint its delivery log (status, attempts, the
 * last error, when) with a replay of any delivery and a test event; all through WebhooksService as
 * the v2 API does. Everything here needs `settings.integrations:write`, reading too.
 */

const GRACE_HOURS = SECRET_GRACE_MS / 3_600_000;
const hidden = { config: { public: true }, schema: { hide: true } };
const PERMISSION = 'settings.integrations:write';
type Params = { Params: { project_id: string } };
type HookParams = { Params: { project_id: string; webhook_id: string } };
/** A signing secret shown once, on the answer to the form that made it. */
type SecretShown = { kind: 'added' | 'rotated'; url: string; secret: string };
type DeliveryParams = { Params: { project_id: string; webhook_id: string; delivery_id: string } };

const hookRow = (w: WebhookView) => ({
  id: w.id,
  url: w.url,
  state: w.enabled ? (w.failing_since ? `Failing since ${when(w.failing_since)}` : 'Enabled') : w.disabled_reason === 'failing' ? 'Disabled: 5 days of failures' : 'Disabled',
  tone: w.enabled ? (w.failing_since ? 'warn' : 'ok') : 'bad',
  created: when(w.created_at),
});

/** The last attempt's error in a sentence ('' when it has none). */
function lastError(d: DeliveryView): string {
  const last = d.attempts.at(-1);
  if (!last || last.outcome === 'delivered') return '';
  const status = last.status_code === null ? '' : `HTTP ${last.status_code}`;
  const error = [last.error_class, last.error_message].filter(Boolean).join(': ');
  return [status, error].filter(Boolean).join(', ') || last.outcome;
}

const deliveryRow = (d: DeliveryView) => ({
  id: d.id,
  event: d.event_type,
  status: d.status,
  tone: d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'bad' : d.status === 'pending' ? 'warn' : '',
  attempts: d.attempt_count,
  error: lastError(d),
  created: when(d.created_at),
  finished: d.completed_at ? when(d.completed_at) : d.next_attempt_at ? `next try ${when(d.next_attempt_at)}` : '',
  replay: d.replay_of !== null,
});

export const webhooksPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const webhooks = services.webhooks;

  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; url?: string; shown?: SecretShown } = {}) => {
    const actor = requirePermission(request, PERMISSION);
    const { page, limit, offset } = pageOf(request.query);
    const list = await webhooks.list(actor.projectId, { limit, offset });
    return dashboardPage(reply, 'webhooks', {
      title: 'Webhooks',
      section: 'webhooks',
      notices: { removed: 'Webhook removed: nothing more is sent to it.' },
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      shown: extra.shown ?? null,
      graceHours: GRACE_HOURS,
      url: extra.url ?? '',
      hooks: list.items.map(hookRow),
      pager: pagerOf(projectPath(context, actor.projectId, '/webhooks'), page, list.total),
    });
  };

  app.get<Params>('/dashboard/:project_id/webhooks', hidden, async (request, reply) => listPage(request, reply));

  app.post<Params>('/dashboard/:project_id/webhooks/create', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const url = field(request.body, 'url');
    if (url === '') return listPage(request, reply, { status: 422, error: 'Give the address (https://…) that should receive the events.', url });
    const made = await webhooks.create(actor.projectId, url);
    if (!made.ok) return listPage(request, reply, { status: made.error.status, error: made.error.message, url });
    await audit(request, 'webhook.add', made.value.id, { url: made.value.url });
    // The secret is shown on this answer only (as the API's 201): not in a redirect, the audit or a log.
    return listPage(request, reply, { shown: { kind: 'added', url: made.value.url, secret: made.value.secret } });
  });

  const hookOf = (request: FastifyRequest<HookParams>, reply: FastifyReply): Promise<WebhookView | null> =>
    foundOr404(reply, request.params.webhook_id, (projectId, id) => webhooks.get(projectId, id), { title: 'Webhook not found', line: 'It does not exist (any more).', back: '/webhooks', backLabel: 'Back to the webhooks' });

  const logPage = async (request: FastifyRequest<HookParams>, reply: FastifyReply, hook: WebhookView, extra: { status?: number; error?: string } = {}) => {
    const actor = request.dashboardActor!;
    const { page, limit, offset } = pageOf(request.query);
    const list = await webhooks.listDeliveries(actor.projectId, hook.id, { limit, offset });
    const deliveries = list.ok ? list.value : { items: [], total: 0 };
    return dashboardPage(reply, 'webhook', {
      title: 'Deliveries',
      section: 'webhooks',
      notices: { replayed: 'Delivery queued again: it is sent within seconds.', tested: 'Test event queued.' },
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      hook: hookRow(hook),
      enabled: hook.enabled,
      deliveries: deliveries.items.map(deliveryRow),
      pager: pagerOf(projectPath(context, actor.projectId, `/webhooks/${hook.id}`), page, deliveries.total),
    });
  };

  app.get<HookParams>('/dashboard/:project_id/webhooks/:webhook_id', hidden, async (request, reply) => {
    requirePermission(request, PERMISSION);
    const hook = await hookOf(request, reply);
    return hook ? logPage(request, reply, hook) : reply;
  });

  app.post<HookParams>('/dashboard/:project_id/webhooks/:webhook_id/test', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const hook = await hookOf(request, reply);
    if (!hook) return reply;
    const sent = await webhooks.sendTest(actor.projectId, hook.id);
    if (!sent.ok) return logPage(request, reply, hook, { status: sent.error.status, error: sent.error.message });
    await audit(request, 'webhook.test', hook.id, { delivery_id: sent.value.delivery_id });
    return seeOther(reply, `/webhooks/${hook.id}`, 'tested');
  });

  app.post<DeliveryParams>('/dashboard/:project_id/webhooks/:webhook_id/deliveries/:delivery_id/replay', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const hook = await hookOf(request, reply);
    if (!hook) return reply;
    const deliveryId = request.params.delivery_id.toLowerCase();
    const replayed = isUuid(deliveryId) ? await webhooks.replayDelivery(actor.projectId, hook.id, deliveryId) : null;
    if (!replayed?.ok) return logPage(request, reply, hook, { status: replayed?.error.status ?? 404, error: replayed?.error.message ?? 'Delivery not found' });
    await audit(request, 'webhook.replay', hook.id, { delivery_id: deliveryId, new_delivery_id: replayed.value.id, event_id: replayed.value.event_id });
    return seeOther(reply, `/webhooks/${hook.id}`, 'replayed');
  });

  confirmedAction(app, {
    route: '/webhooks/:webhook_id/remove',
    permissions: [PERMISSION],
    section: 'webhooks',
    find: hookOf,
    confirm: (hook) => ({
      title: 'Remove this webhook?',
      lines: [`Events stop going to ${hook.url}. Deliveries not sent yet are dropped, and its delivery log goes with it.`],
      confirmLabel: 'Yes, remove the webhook',
      back: '/webhooks',
    }),
    act: (actor, hook) => webhooks.delete(actor.projectId, hook.id),
    audit: (hook) => ({ action: 'webhook.remove', subject: hook.id, details: { url: hook.url } }),
    done: (reply) => seeOther(reply, '/webhooks', 'removed'),
  });

  confirmedAction(app, {
    route: '/webhooks/:webhook_id/rotate-secret',
    permissions: [PERMISSION],
    section: 'webhooks',
    find: hookOf,
    confirm: (hook) => ({
      title: 'Rotate the signing secret of this webhook?',
      lines: [
        `A new signing secret is made for ${hook.url} and shown once, on the next page: have your backend ready to take it.`,
        `The current secret keeps signing next to the new one for ${GRACE_HOURS} hours, so your backend can switch over; then it stops working. Rotating again within those hours ends the older secret at once.`,
      ],
      confirmLabel: 'Yes, make a new secret',
      back: '/webhooks',
      backLabel: 'No, keep the current one',
      danger: false,
    }),
    act: (actor, hook) => webhooks.rotateSecret(actor.projectId, hook.id),
    // The new secret is on this answer only (as the API's 200): not in a redirect, the audit or a log.
    audit: (hook) => ({ action: 'webhook.rotate-secret', subject: hook.id, details: { url: hook.url } }),
    done: (reply, hook, rotated) => listPage(reply.request, reply, { shown: { kind: 'rotated', url: hook.url, secret: rotated.secret } }),
  });
};
