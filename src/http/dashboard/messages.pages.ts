import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MESSAGE_KINDS, MESSAGE_PLACEHOLDERS, type MessageKind, type MessageSetting } from '../../domain/lifecycle/member-messages.js';
import { translate } from '../../domain/lifecycle/message-catalogue.js';
import { audit, dashboardPage, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { field } from './plans-form.js';

/**
 * The messages page (`/dashboard/{project_id}/messages`, docs/dashboard-settings.md): when
 * reminders go (the `reminder_offsets` and `quiet_hours` settings) and each message the bot sends
 * members, on or off with the owner's text (the `messages` setting, docs/lifecycle.md); written
 * through SettingsService as `PATCH /settings` does, so a bad value is its 422 message on the page
 * and nothing is stored. Needs `settings.integrations:write`, reading too.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
const PERMISSION = 'settings.integrations:write';
type Params = { Params: { project_id: string } };
type KindParams = { Params: { project_id: string; kind: string } };

const LABELS: Record<MessageKind, string> = {
  welcome: 'Welcome',
  confirmation: 'Payment confirmation',
  invite: 'Telegram invite link',
  reminder: 'Reminder before the end',
  expired: 'Membership ended',
  payment_failed: 'Payment failed',
  cancelled: 'Renewal cancelled',
};
const CATALOGUE_KEY: Record<MessageKind, string> = { welcome: 'welcome', confirmation: 'confirmation', invite: 'invite.single_use', reminder: 'reminder.ends', expired: 'expired', payment_failed: 'payment_failed', cancelled: 'cancelled' };
const isKind = (k: string): k is MessageKind => (MESSAGE_KINDS as readonly string[]).includes(k);

interface Typed {
  kind?: MessageKind;
  text?: string;
  enabled?: boolean;
  offsets?: string;
  quiet?: string;
}

export const messagesPages: FastifyPluginAsync<DashboardDeps> = async (app, { services }) => {
  const settings = services.settings;

  const page = async (request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; typed?: Typed } = {}) => {
    const actor = requirePermission(request, PERMISSION);
    const all = await settings.all(actor.projectId);
    const typed = extra.typed ?? {};
    const language = all.default_language;
    return dashboardPage(reply, 'messages', {
      title: 'Messages and reminders',
      section: 'messages',
      notices: { timing: 'Reminder times saved.', saved: 'Message saved.' },
      httpStatus: extra.status ?? 200,
      error: extra.error ?? null,
      errorFor: typed.kind ?? (typed.offsets !== undefined ? 'timing' : null),
      offsets: typed.offsets ?? all.reminder_offsets.join(', '),
      quiet: typed.quiet ?? all.quiet_hours ?? '',
      timezone: all.timezone_preference,
      messages: MESSAGE_KINDS.map((kind) => {
        const own: MessageSetting | undefined = all.messages[kind];
        const mine = typed.kind === kind;
        const stored = own?.text ?? null;
        return {
          kind,
          label: LABELS[kind],
          enabled: mine ? typed.enabled : (own?.enabled ?? true),
          text: mine ? typed.text : typeof stored === 'string' ? stored : '',
          perLanguage: stored !== null && typeof stored === 'object' ? Object.keys(stored).join(', ') : null,
          words: translate(language, CATALOGUE_KEY[kind]),
          placeholders: MESSAGE_PLACEHOLDERS[kind].map((p) => `{${p}}`).join(' '),
        };
      }),
    });
  };

  app.get<Params>('/dashboard/:project_id/messages', hidden, async (request, reply) => page(request, reply));

  app.post<Params>('/dashboard/:project_id/messages/timing', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const offsets = field(request.body, 'reminder_offsets');
    const quiet = field(request.body, 'quiet_hours');
    const value = {
      reminder_offsets: /^none$/i.test(offsets) || offsets === '' ? [] : offsets.split(/[\s,]+/).filter(Boolean),
      quiet_hours: quiet === '' ? null : quiet,
    };
    const saved = await settings.patch(actor.projectId, value);
    if (!saved.ok) return page(request, reply, { status: saved.error.status, error: saved.error.message, typed: { offsets, quiet } });
    await audit(request, 'settings.reminders.update', null, value);
    return seeOther(reply, '/messages', 'timing');
  });

  app.post<KindParams>('/dashboard/:project_id/messages/:kind', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const kind = request.params.kind;
    if (!isKind(kind)) return page(request, reply, { status: 404, error: `There is no message ${kind}. Nothing was changed.` });
    const text = String((request.body as Record<string, unknown> | undefined)?.text ?? '').trim();
    const enabled = field(request.body, 'enabled') === 'on';
    const current = (await settings.all(actor.projectId)).messages;
    // The setting is replaced whole (as PATCH /settings does): every other message is kept as it is.
    const next = { ...current, [kind]: { enabled, text: text === '' ? null : text } };
    const saved = await settings.patch(actor.projectId, { messages: next });
    if (!saved.ok) return page(request, reply, { status: saved.error.status, error: saved.error.message, typed: { kind, text, enabled } });
    await audit(request, 'settings.message.update', kind, { enabled, text: text === '' ? null : text });
    return seeOther(reply, '/messages', 'saved');
  });
};
