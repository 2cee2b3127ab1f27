import type { FastifyReply, FastifyRequest } from 'fastify';
import { actorLabel, may, type Actor } from '../../domain/dashboard/actor.js';
import type { Permission } from '../../domain/admins/permissions.js';
import type { Result } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import type { Services } from '../../services.js';

/**
 * What every dashboard page module uses (docs/dashboard.md; how to add a page: the comment on
 * `dashboardPlugin`). A module is a Fastify plugin registered inside the dashboard's signed-in
 * scope: every route there whose path starts with `/dashboard/:project_id` has its actor resolved
 * before the handler runs (no live session of that project: 303 to its sign-in page).
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in actor of a `/dashboard/:project_id/…` request (null outside the signed-in scope). */
    dashboardActor: Actor | null;
  }
  interface FastifyInstance {
    /** The dashboard's services and context, in the dashboard's scope only. */
    dashboardDeps: DashboardDeps;
  }
}

/** What the dashboard's modules are given: the services, and where the dashboard lives. */
export interface DashboardDeps {
  services: Services;
  context: DashboardContext;
}

export interface DashboardContext {
  /** The path prefix of TENURE_PUBLIC_URL ('' at the root): every link a page makes starts with it. */
  base: string;
  /** Whether TENURE_PUBLIC_URL is https (cookies are Secure then). */
  secure: boolean;
  /** TENURE_PUBLIC_URL without its trailing slash. */
  publicUrl: string;
}

/** The sections of the navigation, in order: `key` is what a page passes as `section` to be marked current. */
export const SECTIONS = [
  { key: 'overview', label: 'Overview', path: '' },
  { key: 'members', label: 'Members', path: '/members' },
  { key: 'plans', label: 'Plans', path: '/plans' },
  { key: 'integrations', label: 'Integrations', path: '/integrations' },
  { key: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { key: 'messages', label: 'Messages', path: '/messages' },
  { key: 'money', label: 'Money', path: '/money' },
  { key: 'admins', label: 'Admins', path: '/admins' },
  { key: 'sessions', label: 'Sessions', path: '/sessions' },
  { key: 'audit', label: 'Audit', path: '/audit' },
] as const;

export type Section = (typeof SECTIONS)[number]['key'];

/** A refused permission: the dashboard's error handler answers a 403 page naming it; nothing was changed. */
export class PermissionDenied extends Error {
  constructor(readonly permission: Permission) {
    super(`This needs the permission ${permission}`);
  }
}

/** The actor of a request in the signed-in scope (throws outside it: a bug, never a user's doing). */
export function actorOf(request: FastifyRequest): Actor {
  const actor = request.dashboardActor;
  if (!actor) throw new Error('dashboard: actorOf outside the signed-in scope');
  return actor;
}

/** Whether the request's actor holds `permission` (`all` or that exact string): for showing or hiding a form. */
export function can(request: FastifyRequest, permission: Permission): boolean {
  return may(actorOf(request), permission);
}

/** Refuses the request with a 403 page naming `permission` unless the actor holds it. Call it before reading or changing anything. */
export function requirePermission(request: FastifyRequest, permission: Permission): Actor {
  const actor = actorOf(request);
  if (!may(actor, permission)) throw new PermissionDenied(permission);
  return actor;
}

/** The path of a project's dashboard page: `projectPath(base, id, '/members')`. */
export function projectPath(context: DashboardContext, projectId: string, path = ''): string {
  return `${context.base}/dashboard/${encodeURIComponent(projectId)}${path}`;
}

/**
 * Renders `template` (a file in src/http/dashboard/templates/, its first line
 * `<% layout('./layout', it) %>`) inside the layout: the navigation with `section` marked, the
 * signed-in actor, the sign-out button, and the notice named by `?notice=` when `notices` has it.
 * `data.title` is the page's <title> and heading; `data.httpStatus` the status (default 200). Never cached. Templates get `it.csrf` (a token for
 * their forms), `it.can(permission)`, `it.path(suffix)` (a path in this project's dashboard),
 * `it.base` and `it.actor`.
 */
export function dashboardPage(
  reply: FastifyReply,
  template: string,
  data: { title: string; section: Section; notices?: Record<string, string>; httpStatus?: number } & Record<string, unknown>,
) {
  const request = reply.request;
  const actor = actorOf(request);
  const context = contextOf(reply);
  const noticeKey = (request.query as Record<string, unknown> | undefined)?.notice;
  const notice = typeof noticeKey === 'string' && data.notices && Object.hasOwn(data.notices, noticeKey) ? data.notices[noticeKey] : null;
  return reply
    .code(data.httpStatus ?? 200)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .view(template, {
      ...data,
      notice,
      base: context.base,
      actor: { ...actor, label: actorLabel(actor) },
      nav: SECTIONS.map((s) => ({ ...s, href: projectPath(context, actor.projectId, s.path), current: s.key === data.section })),
      csrf: reply.generateCsrf(),
      can: (permission: Permission) => may(actor, permission),
      path: (suffix = '') => projectPath(context, actor.projectId, suffix),
    });
}

/** Post/redirect/get: 303 to a page of this project's dashboard, with `?notice=key` (a key of that page's `notices`). */
export function seeOther(reply: FastifyReply, path: string, notice?: string) {
  const context = contextOf(reply);
  const actor = actorOf(reply.request);
  const to = projectPath(context, actor.projectId, path) + (notice ? `${path.includes('?') ? '&' : '?'}notice=${encodeURIComponent(notice)}` : '');
  return reply.header('cache-control', 'no-store').redirect(to, 303);
}

/** Records the actor's action in the audit log, right after the change (a use case with a transaction records in it: `entryOf`). */
export function audit(request: FastifyRequest, action: string, subject: string | null = null, details: Record<string, unknown> = {}): Promise<void> {
  return servicesOf(request).dashboardAudit.record(actorOf(request), action, subject, details);
}

/** A page of a heading, a few sentences and at most one link, outside the layout's navigation (sign-in, errors). */
export function messagePage(reply: FastifyReply, status: number, message: { title: string; lines: string[]; action?: { href: string; label: string } | null; tone?: 'bad' | '' }) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .view('message', { action: null, tone: status >= 400 ? 'bad' : '', ...message, base: contextOf(reply).base });
}

/**
 * The object a route's id names (a UUID, any case) in the actor's project, read by `get`; when
 * there is none, answers a 404 page (`missing.line`, then "Nothing was changed.", and a link back
 * to `missing.back`) and returns null: the handler then returns the reply.
 */
export async function foundOr404<T>(
  reply: FastifyReply,
  id: string,
  get: (projectId: string, id: string) => Promise<Result<T>>,
  missing: { title: string; line: string; back: string; backLabel: string },
): Promise<T | null> {
  const projectId = actorOf(reply.request).projectId;
  const found = isUuid(id) ? await get(projectId, id.toLowerCase()) : null;
  if (found?.ok) return found.value;
  await messagePage(reply, 404, {
    title: missing.title,
    lines: [`${missing.line} Nothing was changed.`],
    action: { href: projectPath(contextOf(reply), projectId, missing.back), label: missing.backLabel },
  });
  return null;
}

// The scope's services and context: a decorator of the dashboard's scope (src/http/dashboard/dashboard.plugin.ts), seen by every module in it.
const depsOf = (r: FastifyReply | FastifyRequest): DashboardDeps => r.server.dashboardDeps;
const contextOf = (reply: FastifyReply): DashboardContext => depsOf(reply).context;
const servicesOf = (request: FastifyRequest): Services => depsOf(request).services;
