import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Permission } from '../../domain/admins/permissions.js';
import type { Actor } from '../../domain/dashboard/actor.js';
import type { AppError, Result } from '../../domain/errors.js';
import { actorOf, audit, dashboardPage, messagePage, projectPath, requirePermission, type Section } from './context.js';

/**
 * An action that asks first (docs/dashboard-settings.md): `GET /dashboard/{project_id}{route}` shows
 * the 'confirm' page about its subject, `POST` to the same address (with the page's CSRF token) does
 * it through one service call, records it in the audit log and answers as `done` says (a 303 with a
 * notice, or a page of its own where a secret is shown once). Both check every permission before
 * anything is read. A subject that is not there answers `find`'s own page, a refused call
 * `refused`'s page (by default a page with the service's sentence): nothing is changed either way.
 */
export interface ConfirmedAction<P extends Record<string, string>, S, V> {
  /** The address below `/dashboard/:project_id`, such as `/coupons/:coupon_id/delete`. */
  route: string;
  /** What the action needs, every one of them. */
  permissions: readonly Permission[];
  section: Section;
  /** The subject named by the address, or null once `find` has answered a not-found page. */
  find: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => Promise<S | null>;
  /** The confirmation page's words; `back` is a path of this project's dashboard (`/plans`). */
  confirm: (subject: S) => { title: string; lines: string[]; confirmLabel: string; back: string; backLabel?: string; danger?: boolean };
  /** The one service call. */
  act: (actor: Actor, subject: S) => Promise<Result<V>>;
  /** The audit entry; its details never hold a secret. */
  audit: (subject: S, value: V) => { action: string; subject: string; details?: Record<string, unknown> };
  /** The answer once done (`seeOther(reply, path, notice)` as a rule). */
  done: (reply: FastifyReply, subject: S, value: V) => unknown;
  /** The page for a call the service refused; by default its sentence on a page of its own. */
  refused?: (reply: FastifyReply, subject: S, error: AppError) => unknown;
}

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);
const hidden = { config: { public: true }, schema: { hide: true } };

/** Registers the action's GET (the confirmation page) and POST (the action) on `app`, a dashboard page module's scope. */
export function confirmedAction<P extends Record<string, string>, S, V>(app: FastifyInstance, spec: ConfirmedAction<P, S, V>): void {
  // The dashboard's scope decorates itself with its context (dashboard.plugin.ts) before any module registers.
  const { context } = app.dashboardDeps;
  const route = `/dashboard/:project_id${spec.route}`;
  const allowed = (request: FastifyRequest): Actor => {
    for (const permission of spec.permissions) requirePermission(request, permission);
    return actorOf(request);
  };
  // The address the form posts to: the route with this request's own parameters.
  const here = (actor: Actor, params: P) => projectPath(context, actor.projectId, spec.route.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? '')));

  app.get<{ Params: P }>(route, hidden, async (request, reply) => {
    const actor = allowed(request);
    const subject = await spec.find(request, reply);
    if (subject === null) return reply;
    const words = spec.confirm(subject);
    return dashboardPage(reply, 'confirm', {
      title: words.title,
      section: spec.section,
      lines: words.lines,
      action: here(actor, request.params as P),
      confirmLabel: words.confirmLabel,
      back: projectPath(context, actor.projectId, words.back),
      backLabel: words.backLabel ?? 'No, keep it',
      danger: words.danger ?? true,
    });
  });

  app.post<{ Params: P }>(route, { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = allowed(request);
    const subject = await spec.find(request, reply);
    if (subject === null) return reply;
    const result = await spec.act(actor, subject);
    if (!result.ok) {
      if (spec.refused) return spec.refused(reply, subject, result.error);
      const back = projectPath(context, actor.projectId, spec.confirm(subject).back);
      return messagePage(reply, result.error.status, { title: 'Nothing was changed', lines: [sentence(result.error.message)], action: { href: back, label: 'Back' } });
    }
    const entry = spec.audit(subject, result.value);
    await audit(request, entry.action, entry.subject, entry.details);
    return spec.done(reply, subject, result.value);
  });
}
