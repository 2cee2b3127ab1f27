import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AdminView } from '../../domain/admins/admin.view.js';
import { GRANTABLE } from '../../domain/admins/permissions.js';
import { audit, dashboardPage, messagePage, projectPath, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { confirmedAction } from './confirmed-action.js';
import { pageOf, pagerOf } from './paging.js';

/**
 * The admins page (`/dashboard/{project_id}/admins`, docs/dashboard.md, "Admins page"): the list
 * (`admins:read`), adding one with permission checkboxes (`admins:add`), changing a set
 * (`admins:update`), removing one after a confirmation page (`admins:delete`); each through
 * AdminsService, as the API does, and recorded in the audit log.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { Params: { project_id: string } };
type AdminParams = { Params: { project_id: string; user_id: string } };
const USER_ID = /^[0-9]{1,20}$/;

const NOTICES = { added: 'Admin added.', updated: 'Permissions changed.', removed: 'Admin removed.' };

/** The checked permissions of a form, in the catalogue's order. */
function permissionsOf(body: unknown): string[] {
  const raw = (body as Record<string, unknown> | undefined)?.permissions;
  const given = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
  const unknown = given.filter((p) => !GRANTABLE.includes(p));
  return [...GRANTABLE.filter((p) => given.includes(p)), ...unknown];
}

const nameOf = (a: AdminView) => a.user_name?.first_name ?? a.user_name?.username ?? null;
const choices = (held: readonly string[]) => GRANTABLE.map((p) => ({ value: p, id: `perm-${p.replace(/[^a-z0-9]+/gi, '-')}`, checked: held.includes(p) }));

export const adminsPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const admins = services.admins;

  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; form?: { userId: string; permissions: string[] } } = {}) => {
    const actor = requirePermission(request, 'admins:read');
    const { page, limit, offset } = pageOf(request.query);
    const list = await admins.list(actor.projectId, { limit, offset });
    return dashboardPage(reply, 'admins', {
      title: 'Admins',
      section: 'admins',
      notices: NOTICES,
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      admins: list.items.map((a) => ({ ...a, name: nameOf(a), all: a.permissions.includes('all') })),
      pager: pagerOf(projectPath(context, actor.projectId, '/admins'), page, list.total),
      form: { userId: extra.form?.userId ?? '', choices: choices(extra.form?.permissions ?? []) },
    });
  };

  app.get<Params>('/dashboard/:project_id/admins', hidden, async (request, reply) => listPage(request, reply));

  app.post<Params>('/dashboard/:project_id/admins/add', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'admins:add');
    const userId = String((request.body as Record<string, unknown> | undefined)?.user_id ?? '').trim();
    const permissions = permissionsOf(request.body);
    const form = { userId, permissions };
    if (!USER_ID.test(userId)) return listPage(request, reply, { status: 422, error: 'The user id must be the member’s Discord or Telegram id: digits only.', form });
    const added = await admins.add(actor.projectId, userId, permissions);
    if (!added.ok) {
      const hint = added.error.code === 'NOT_FOUND' ? `${added.error.message}: the project has not seen user ${userId}. Give them a membership first.` : added.error.message;
      return listPage(request, reply, { status: added.error.status, error: hint, form });
    }
    await audit(request, 'admin.add', userId, { permissions: added.value.permissions });
    return seeOther(reply, '/admins', 'added');
  });

  const target = async (request: FastifyRequest<AdminParams>, reply: FastifyReply): Promise<AdminView | null> => {
    const { user_id: userId } = request.params;
    const admin = USER_ID.test(userId) ? await admins.get(request.dashboardActor!.projectId, userId) : null;
    if (admin) return admin;
    await messagePage(reply, 404, { title: 'Admin not found', lines: [`${userId} is not an admin of this project (any more). Nothing was changed.`], action: { href: projectPath(context, request.dashboardActor!.projectId, '/admins'), label: 'Back to the admins' } });
    return null;
  };

  app.get<AdminParams>('/dashboard/:project_id/admins/:user_id', hidden, async (request, reply) => {
    requirePermission(request, 'admins:update');
    const admin = await target(request, reply);
    if (!admin) return reply;
    return dashboardPage(reply, 'admin-edit', { title: `Permissions of ${nameOf(admin) ?? admin.user_id}`, section: 'admins', admin: { ...admin, name: nameOf(admin) }, choices: choices(admin.permissions), error: null });
  });

  app.post<AdminParams>('/dashboard/:project_id/admins/:user_id/update', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, 'admins:update');
    const admin = await target(request, reply);
    if (!admin) return reply;
    const permissions = permissionsOf(request.body);
    const updated = await admins.update(actor.projectId, admin.user_id, permissions);
    if (!updated.ok) {
      return dashboardPage(reply, 'admin-edit', { title: `Permissions of ${nameOf(admin) ?? admin.user_id}`, section: 'admins', httpStatus: updated.error.status, admin: { ...admin, name: nameOf(admin) }, choices: choices(permissions), error: updated.error.message });
    }
    await audit(request, 'admin.update', admin.user_id, { before: admin.permissions, after: updated.value.permissions });
    return seeOther(reply, '/admins', 'updated');
  });

  confirmedAction(app, {
    route: '/admins/:user_id/remove',
    permissions: ['admins:delete'],
    section: 'admins',
    find: target,
    confirm: (admin) => ({
      title: `Remove ${nameOf(admin) ? `${nameOf(admin)} (${admin.user_id})` : admin.user_id} as an admin?`,
      lines: ['They lose every permission at once, and their dashboard sessions stop working. They stay a user of the project, with their memberships as they are.'],
      confirmLabel: 'Yes, remove the admin',
      back: '/admins',
      backLabel: 'No, keep them',
    }),
    act: (actor, admin) => admins.remove(actor.projectId, admin.user_id),
    audit: (admin) => ({ action: 'admin.remove', subject: admin.user_id, details: { permissions: admin.permissions } }),
    done: (reply) => seeOther(reply, '/admins', 'removed'),
  });
};
