import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Permission } from '../../domain/admins/permissions.js';
import type { Done } from '../../domain/dashboard-members/member-actions.js';
import type { Actor } from '../../domain/dashboard/actor.js';
import type { Result } from '../../domain/errors.js';
import { dashboardPage, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { memberPageView } from './member-view.js';
import { when } from './members-view.js';

/**
 * A member's page (`/dashboard/{project_id}/members/{user_id}`, docs/dashboard-members.md) and its
 * actions: each a POST form with the CSRF token to the page's address plus the action, checked
 * against the admin's permission before anything is read (a 403 page naming it otherwise), then
 * 303 back to the page with a notice. Ending a membership and banning ask first (a confirmation
 * page). A link made for the member (portal, invite) is shown once on a page of its own, never put
 * in an address.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
type Params = { project_id: string; user_id: string };
type Form = Record<string, unknown>;

const USER_ID = /^\d{1,30}$/;

const NOTICES: Record<string, string> = {
  extended: 'The end date is set. The member keeps access until the new date.',
  ended: 'The membership has ended. Access is being taken away.',
  'renewal-cancelled': 'The renewal is cancelled. Access stays until the end date.',
  banned: 'The member is banned. Access is being taken away and they cannot get a new membership.',
  unbanned: 'The ban is lifted.',
  resynced: 'Access is being applied again.',
  'invite-requested': 'A new invite link is being made; the bot sends it to the member.',
};

/** Each action: the permission it needs, what it calls, where it leads; `confirm` for the destructive ones. */
interface Action {
  permission: Permission;
  confirm?: { title: string; lines: string[]; button: string; reason?: boolean };
  run(actor: Actor, userId: string, form: Form): Promise<Result<Done>>;
  notice: string;
}

export const memberPages: FastifyPluginAsync<DashboardDeps> = async (app, { services }) => {
  const actions = services.dashboardMemberActions;
  const ACTIONS: Record<string, Action> = {
    extend: { permission: 'memberships:update', run: (a, u, f) => actions.extend(a, u, f), notice: 'extended' },
    end: {
      permission: 'memberships:update',
      confirm: {
        title: 'End this membership now?',
        lines: ['The member loses access at once and is told their membership has ended. A renewing subscription is cancelled first. You can give them days again later.'],
        button: 'End the membership now',
      },
      run: (a, u) => actions.endNow(a, u),
      notice: 'ended',
    },
    'cancel-renewal': { permission: 'memberships:update', run: (a, u) => actions.cancelRenewal(a, u), notice: 'renewal-cancelled' },
    ban: {
      permission: 'ban:add',
      confirm: { title: 'Ban this member?', lines: ['They lose access to everything the project grants and cannot get a new membership until the ban is lifted.'], button: 'Ban the member', reason: true },
      run: (a, u, f) => actions.ban(a, u, f),
      notice: 'banned',
    },
    unban: { permission: 'ban:remove', run: (a, u) => actions.unban(a, u), notice: 'unbanned' },
    resync: { permission: 'memberships:update', run: (a, u) => actions.resync(a, u), notice: 'resynced' },
    invite: { permission: 'memberships:update', run: (a, u, f) => actions.invite(a, u, f.target_id), notice: 'invite-requested' },
    'portal-link': { permission: 'memberships:update', run: (a, u) => actions.portalLink(a, u), notice: '' },
  };

  const problem = (reply: FastifyReply, userId: string, status: number, message: string) =>
    dashboardPage(reply, 'member-problem', {
      title: status === 404 ? 'No such member' : 'That did not work',
      section: 'members',
      httpStatus: status,
      lines: [message.endsWith('.') ? message : `${message}.`, status === 404 ? 'Check the address, or find the member in the table.' : 'Nothing was changed.'],
      back: USER_ID.test(userId) && status !== 404 ? `/members/${userId}` : '/members',
    });

  app.get<{ Params: Params }>('/dashboard/:project_id/members/:user_id', hidden, async (request, reply) => {
    const actor = requirePermission(request, 'memberships:read');
    const { user_id: userId } = request.params;
    if (!USER_ID.test(userId)) return problem(reply, userId, 404, 'There is no member with this id');
    const page = await services.dashboardMembers.member(actor, userId);
    if (!page.ok) return problem(reply, userId, page.error.status, page.error.status === 404 ? 'There is no member with this id in this project' : page.error.message);
    return dashboardPage(reply, 'member', { ...memberPageView(page.value), title: page.value.user.user_name?.first_name ?? userId, section: 'members', notices: NOTICES });
  });

  // The confirmation step of a destructive action (the member page's button leads here).
  app.get<{ Params: Params & { action: string } }>('/dashboard/:project_id/members/:user_id/:action', hidden, async (request, reply) => {
    const action = ACTIONS[request.params.action];
    const { user_id: userId } = request.params;
    if (!action?.confirm) return problem(reply, userId, 404, 'There is no such page');
    requirePermission(request, action.permission);
    return confirmPage(reply, request.params.action, userId, action);
  });

  app.post<{ Params: Params & { action: string }; Body: Form | undefined }>(
    '/dashboard/:project_id/members/:user_id/:action',
    { ...hidden, preHandler: app.csrfProtection },
    async (request, reply) => {
      const action = ACTIONS[request.params.action];
      const { user_id: userId } = request.params;
      if (!action) return problem(reply, userId, 404, 'There is no such action');
      const actor = requirePermission(request, action.permission);
      if (!USER_ID.test(userId)) return problem(reply, userId, 404, 'There is no member with this id');
      const form = request.body ?? {};
      // A destructive action acts only from its confirmation page's button.
      if (action.confirm && form.confirm !== 'yes') return confirmPage(reply, request.params.action, userId, action);
      const done = await action.run(actor, userId, form);
      if (!done.ok) return problem(reply, userId, done.error.status, done.error.message);
      if (done.value.link) return linkPage(reply, userId, done.value);
      return seeOther(reply, `/members/${userId}`, action.notice);
    },
  );

  function confirmPage(reply: FastifyReply, key: string, userId: string, action: Action) {
    return dashboardPage(reply, 'member-confirm', { title: action.confirm!.title, section: 'members', confirm: action.confirm, action: `/members/${userId}/${key}`, back: `/members/${userId}` });
  }

  function linkPage(reply: FastifyReply, userId: string, done: Done) {
    return dashboardPage(reply, 'member-link', { title: done.link!.label, section: 'members', said: done.notice, link: { ...done.link!, expiresAt: when(done.link!.expiresAt) }, back: `/members/${userId}` });
  }
};
